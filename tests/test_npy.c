/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_npy.c: problem data in NumPy .npy files and .npz archives
 * (ref/io/npy.c, ref/io/spec_data.c; docs/formats.md, "Data in .npy
 * files"), and their SHA-256 in the result.
 *
 * The tests write their .npy files themselves, byte by byte as NEP 1 and
 * numpy/lib/format.py describe them (magic, version, little-endian header
 * length, a dict literal padded with spaces to a multiple of 64 bytes and
 * ended by '\n', then the raw little-endian data), and their .npz archives
 * through libzip (stored and deflated members, as np.savez and
 * np.savez_compressed write them).  The same numbers also go into inline
 * JSON (printed with 17 significant digits, which read back to the same
 * doubles), so a run from files must give a result identical, byte for
 * byte outside its "problem" block, to the run from JSON.  The recorded
 * SHA-256 is compared with coreutils' sha256sum of the same file.
 */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>
#include "pflref.h"
#include "suites.h"
#include "testutil.h"
#include "test_npy.h"

/* ---- writing .npy files ----------------------------------------------- */

size_t tn_npy_bytes(unsigned char *out, size_t cap, int major,
                    const char *dict, const void *data, size_t nbytes)
{
    const size_t lenbytes = major == 1 ? 2 : 4;
    const size_t pre = 8 + lenbytes, dlen = strlen(dict);
    size_t hlen = dlen + 1;                 /* the dict and '\n' */
    while ((pre + hlen) % 64 != 0)
        hlen++;
    const size_t total = pre + hlen + nbytes;
    ck_assert_uint_le(total, cap);
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (unsigned char)major;
    out[7] = 0;
    for (size_t i = 0; i < lenbytes; i++)
        out[8 + i] = (unsigned char)(hlen >> (8 * i));
    memcpy(out + pre, dict, dlen);
    memset(out + pre + dlen, ' ', hlen - dlen - 1);
    out[pre + hlen - 1] = '\n';
    if (nbytes > 0)
        memcpy(out + pre + hlen, data, nbytes);
    return total;
}

void tn_write_bytes(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    ck_assert_uint_eq(fwrite(b, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

/* A (rows × cols, cols = 0: 1-D) array of `descr` into a .npy file. */
void tn_write_npy(const char *path, const char *descr, size_t rows,
                  size_t cols, const void *data, size_t itemsize)
{
    char dict[160];
    if (cols == 0)
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': "
                 "False, 'shape': (%zu,), }", descr, rows);
    else
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': "
                 "False, 'shape': (%zu, %zu), }", descr, rows, cols);
    const size_t nbytes = rows * (cols ? cols : 1) * itemsize;
    unsigned char *buf = malloc(nbytes + 256);
    ck_assert_ptr_nonnull(buf);
    size_t n = tn_npy_bytes(buf, nbytes + 256, 1, dict, data, nbytes);
    tn_write_bytes(path, buf, n);
    free(buf);
}

/* ---- the problem: the same numbers as JSON, .npy and .npz -------------- */

enum { NC = 3, D = 3, NT = 3 };   /* clients, features, test samples */
static const size_t N_TRAIN[NC] = {5, 6, 4};

/* High-entropy features: no two equal, none integral. */
static double feature(size_t c, size_t i, size_t j, int test)
{
    return 0.37 * (double)((7 * i + 3 * j + 5 * c) % 11) - 1.9 +
           0.013 * (double)(c + 1) + (test ? 0.211 : 0.0) +
           0.0007 * (double)j;
}

/* Label or target i of client c: a class in [0, 3) or a real target. */
static double label(size_t c, size_t i, int classes, int test)
{
    if (classes)
        return (double)((i * 2 + c + (size_t)test) % 3);
    return 1.25 * (double)i - 0.7 * (double)c + (test ? 0.33 : 0.0);
}

/* The data of client c: X (n × D), y (n) of the train or test part; the
 * test features are float32 values (they are also written as '<f4'). */
static size_t client_data(size_t c, int test, int classes, double *X,
                          double *y)
{
    const size_t n = test ? NT : N_TRAIN[c];
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < D; j++) {
            const double x = feature(c, i, j, test);
            X[i * D + j] = test ? (double)(float)x : x;
        }
        y[i] = label(c, i, classes, test);
    }
    return n;
}

/* Append "[v0, v1, ...]" with 17 significant digits. */
static void put_vector(char *s, size_t len, const double *v, size_t n)
{
    char num[40];
    strcat(s, "[");
    for (size_t i = 0; i < n; i++) {
        snprintf(num, sizeof num, "%s%.17g", i ? ", " : "", v[i]);
        strcat(s, num);
    }
    strcat(s, "]");
    ck_assert_uint_lt(strlen(s), len);
}

/* The clients as inline JSON arrays. */
static void clients_json(char *s, size_t len, int classes)
{
    double X[16 * D], y[16];
    strcpy(s, "[");
    for (size_t c = 0; c < NC; c++) {
        strcat(s, c ? ", {" : "{");
        const char *keys[2][2] = {{"\"X\": ", ", \"y\": "},
                                  {", \"X_test\": ", ", \"y_test\": "}};
        for (int t = 0; t < 2; t++) {
            const size_t n = client_data(c, t, classes, X, y);
            strcat(s, keys[t][0]);
            strcat(s, "[");
            for (size_t i = 0; i < n; i++) {
                if (i)
                    strcat(s, ", ");
                put_vector(s, len, X + i * D, D);
            }
            strcat(s, "]");
            strcat(s, keys[t][1]);
            put_vector(s, len, y, n);
        }
        strcat(s, "}");
    }
    strcat(s, "]");
}

/* Write client c's arrays into dir: c<c>_X.npy '<f8', c<c>_y.npy ('<f8'
 * targets or `label_descr` labels), c<c>_Xt.npy '<f4', c<c>_yt.npy
 * ('<f8' or '|u1'). */
static void write_client_files(const char *dir, size_t c, int classes,
                               const char *label_descr)
{
    double X[16 * D], y[16];
    char path[512];
    size_t n = client_data(c, 0, classes, X, y);
    snprintf(path, sizeof path, "%s/c%zu_X.npy", dir, c);
    tn_write_npy(path, "<f8", n, D, X, 8);
    snprintf(path, sizeof path, "%s/c%zu_y.npy", dir, c);
    if (!classes) {
        tn_write_npy(path, "<f8", n, 0, y, 8);
    } else if (strcmp(label_descr, "<i8") == 0) {
        int64_t l[16];
        for (size_t i = 0; i < n; i++)
            l[i] = (int64_t)y[i];
        tn_write_npy(path, "<i8", n, 0, l, 8);
    } else {
        int32_t l[16];
        for (size_t i = 0; i < n; i++)
            l[i] = (int32_t)y[i];
        tn_write_npy(path, "<i4", n, 0, l, 4);
    }
    n = client_data(c, 1, classes, X, y);
    float Xf[16 * D];
    for (size_t i = 0; i < n * D; i++)
        Xf[i] = (float)X[i];
    snprintf(path, sizeof path, "%s/c%zu_Xt.npy", dir, c);
    tn_write_npy(path, "<f4", n, D, Xf, 4);
    snprintf(path, sizeof path, "%s/c%zu_yt.npy", dir, c);
    if (classes) {
        unsigned char l[16];
        for (size_t i = 0; i < n; i++)
            l[i] = (unsigned char)y[i];
        tn_write_npy(path, "|u1", n, 0, l, 1);
    } else {
        tn_write_npy(path, "<f8", n, 0, y, 8);
    }
}

/* An .npz archive at path holding every client's train arrays as members
 * X<c>.npy ('<f8') and y<c>.npy ('<f8', or '<i8' labels), each member
 * stored (method ZIP_CM_STORE) or deflated (ZIP_CM_DEFLATE). */
static void write_npz(const char *path, int classes, zip_int32_t method)
{
    int zerr;
    zip_t *z = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &zerr);
    ck_assert_ptr_nonnull(z);
    for (size_t c = 0; c < NC; c++) {
        double X[16 * D], y[16];
        const size_t n = client_data(c, 0, classes, X, y);
        int64_t l[16];
        for (size_t i = 0; i < n; i++)
            l[i] = (int64_t)y[i];
        for (int k = 0; k < 2; k++) {
            unsigned char *buf = malloc(1024);
            ck_assert_ptr_nonnull(buf);
            char dict[160], name[32];
            if (k == 0)
                snprintf(dict, sizeof dict, "{'descr': '<f8', "
                         "'fortran_order': False, 'shape': (%zu, 3), }", n);
            else
                snprintf(dict, sizeof dict, "{'descr': '%s', "
                         "'fortran_order': False, 'shape': (%zu,), }",
                         classes ? "<i8" : "<f8", n);
            const void *data = k == 0 ? (const void *)X
                               : classes ? (const void *)l
                                         : (const void *)y;
            const size_t bytes = k == 0 ? n * D * 8 : n * 8;
            const size_t total = tn_npy_bytes(buf, 1024, 2, dict, data,
                                              bytes);
            snprintf(name, sizeof name, "%c%zu.npy", k == 0 ? 'X' : 'y', c);
            zip_source_t *src = zip_source_buffer(z, buf, total, 1);
            ck_assert_ptr_nonnull(src);
            const zip_int64_t idx = zip_file_add(z, name, src, 0);
            ck_assert_int_ge(idx, 0);
            ck_assert_int_eq(zip_set_file_compression(
                                 z, (zip_uint64_t)idx, method, 0), 0);
        }
    }
    ck_assert_int_eq(zip_close(z), 0);
}

/* A spec around `clients` (JSON array text) for the model `model`. */
static char *spec_text(const char *model, const char *clients)
{
    const size_t len = strlen(clients) + 2048;
    char *s = malloc(len);
    ck_assert_ptr_nonnull(s);
    snprintf(s, len,
             "{\"format\": \"pflref-spec/1\", \"name\": \"npy\", "
             "\"model\": %s, \"problem\": {\"clients\": %s}, "
             "\"init\": {\"kind\": \"gaussian\", \"seed\": 5, \"sd\": 0.3}, "
             "\"algorithm\": {\"name\": \"fedavg\", \"hyperparameters\": "
             "{\"eta\": 0.07}}, \"schedule\": {\"kind\": \"generate\", "
             "\"rounds\": 3, \"clients_per_round\": 2, \"client_seed\": 4, "
             "\"local\": {\"steps\": 2, \"batch_size\": 2}}, "
             "\"output\": {\"trajectory\": \"step\"}}",
             model, clients);
    return s;
}

/* Run spec text with files in dir; the result text (malloc'd). */
static char *run_in(const char *text, const char *dir)
{
    char *result = NULL;
    pflref_error err;
    pflref_status st = pflref_spec_run_text(text, strlen(text), dir, NULL,
                                            &result, &err);
    ck_assert_msg(st == PFLREF_OK, "run failed: %s: %s", err.where,
                  err.message);
    return result;
}

/* The result text without its "problem" block, re-serialised with the
 * writer's own flags (insertion order, 17 digits). */
static char *without_problem(const char *result, json_t **problem)
{
    json_error_t je;
    json_t *root = json_loads(result, 0, &je);
    ck_assert_ptr_nonnull(root);
    *problem = json_incref(json_object_get(root, "problem"));
    ck_assert_int_eq(json_object_del(root, "problem"), 0);
    char *s = json_dumps(root, JSON_PRESERVE_ORDER | JSON_COMPACT |
                                   JSON_REAL_PRECISION(17));
    json_decref(root);
    return s;
}

/* sha256sum's digest of path (64 hex digits) into hex. */
static void sha256sum(const char *path, char hex[65])
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "sha256sum '%s'", path);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(fscanf(p, "%64s", hex), 1);
    pclose(p);
}

/* The entry of problem.data_files for `path`: its sha256, or NULL. */
static const char *recorded_sha(const json_t *problem, const char *path)
{
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(problem, "data_files"), i, f)
        if (strcmp(json_string_value(json_object_get(f, "path")), path) == 0)
            return json_string_value(json_object_get(f, "sha256"));
    return NULL;
}

/* The runs from JSON and from files agree byte for byte outside
 * "problem"; the file run records each file once with sha256sum's
 * digest. */
static void assert_same_run(const char *model, int classes,
                            const char *files_clients, const char *dir,
                            const char *const *hashed, size_t n_hashed)
{
    char *inline_clients = malloc(65536);
    ck_assert_ptr_nonnull(inline_clients);
    clients_json(inline_clients, 65536, classes);
    char *a = spec_text(model, inline_clients);
    char *b = spec_text(model, files_clients);
    char *ra = run_in(a, dir), *rb = run_in(b, dir);
    json_t *pa, *pb;
    char *sa = without_problem(ra, &pa), *sb = without_problem(rb, &pb);
    ck_assert_msg(strcmp(sa, sb) == 0, "the run from files differs from "
                  "the run from JSON");
    ck_assert_ptr_null(json_object_get(pa, "data_files"));
    ck_assert_uint_eq(json_array_size(json_object_get(pb, "data_files")),
                      n_hashed);
    for (size_t i = 0; i < n_hashed; i++) {
        char full[512], hex[65];
        snprintf(full, sizeof full, "%s/%s", dir, hashed[i]);
        sha256sum(full, hex);
        const char *got = recorded_sha(pb, hashed[i]);
        ck_assert_msg(got != NULL, "%s not recorded", hashed[i]);
        ck_assert_str_eq(got, hex);
    }
    json_decref(pa);
    json_decref(pb);
    free(sa);
    free(sb);
    free(ra);
    free(rb);
    free(a);
    free(b);
    free(inline_clients);
}

/* Every client's four arrays named as .npy files. */
static void files_clients(char *s, size_t len)
{
    s[0] = '\0';
    strcat(s, "[");
    for (size_t c = 0; c < NC; c++) {
        char one[256];
        snprintf(one, sizeof one, "%s{\"X\": \"c%zu_X.npy\", \"y\": "
                 "\"c%zu_y.npy\", \"X_test\": \"c%zu_Xt.npy\", \"y_test\": "
                 "\"c%zu_yt.npy\"}", c ? ", " : "", c, c, c, c);
        strcat(s, one);
    }
    strcat(s, "]");
    ck_assert_uint_lt(strlen(s), len);
}

#define LINEAR "{\"kind\": \"linear\", \"d\": 3, \"loss\": \"squared\", " \
               "\"bias\": true}"
#define SOFTMAX "{\"kind\": \"softmax\", \"d\": 3, \"k\": 3}"
#define MLP "{\"kind\": \"mlp\", \"d\": 3, \"h\": 4, \"k\": 3}"

static const char *const ALL_FILES[] = {
    "c0_X.npy", "c0_y.npy", "c0_Xt.npy", "c0_yt.npy",
    "c1_X.npy", "c1_y.npy", "c1_Xt.npy", "c1_yt.npy",
    "c2_X.npy", "c2_y.npy", "c2_Xt.npy", "c2_yt.npy"};

/* Linear regression: '<f8' X and y used in place, '<f4' test features
 * widened. */
START_TEST(test_npy_linear_same_as_json)
{
    char *dir = tu_tmpdir();
    for (size_t c = 0; c < NC; c++)
        write_client_files(dir, c, 0, NULL);
    char clients[2048];
    files_clients(clients, sizeof clients);
    assert_same_run(LINEAR, 0, clients, dir, ALL_FILES, 12);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* Classification, softmax and the MLP: labels as '<i8' (train), '|u1'
 * (test) and, for the MLP, '<i4'. */
START_TEST(test_npy_classifiers_same_as_json)
{
    char *dir = tu_tmpdir();
    for (size_t c = 0; c < NC; c++)
        write_client_files(dir, c, 1, "<i8");
    char clients[2048];
    files_clients(clients, sizeof clients);
    assert_same_run(SOFTMAX, 1, clients, dir, ALL_FILES, 12);
    for (size_t c = 0; c < NC; c++)
        write_client_files(dir, c, 1, "<i4");
    assert_same_run(MLP, 1, clients, dir, ALL_FILES, 12);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* .npz archives, stored and deflated, named "all.npz:X0" (the ".npy" of
 * the member implied) and "all.npz:y0.npy"; the archive is hashed once. */
START_TEST(test_npz_same_as_json)
{
    const zip_int32_t methods[2] = {ZIP_CM_STORE, ZIP_CM_DEFLATE};
    for (int cls = 0; cls < 2; cls++)
        for (int k = 0; k < 2; k++) {
            char *dir = tu_tmpdir();
            char path[512];
            snprintf(path, sizeof path, "%s/all.npz", dir);
            write_npz(path, cls, methods[k]);
            for (size_t c = 0; c < NC; c++)
                write_client_files(dir, c, cls, "<i8");
            char clients[2048] = "[";
            for (size_t c = 0; c < NC; c++) {
                char one[256];
                snprintf(one, sizeof one, "%s{\"X\": \"all.npz:X%zu\", "
                         "\"y\": \"all.npz:y%zu.npy\", \"X_test\": "
                         "\"c%zu_Xt.npy\", \"y_test\": \"c%zu_yt.npy\"}",
                         c ? ", " : "", c, c, c, c);
                strcat(clients, one);
            }
            strcat(clients, "]");
            static const char *const hashed[] = {
                "all.npz", "c0_Xt.npy", "c0_yt.npy", "c1_Xt.npy",
                "c1_yt.npy", "c2_Xt.npy", "c2_yt.npy"};
            assert_same_run(cls ? SOFTMAX : LINEAR, cls, clients, dir, hashed,
                            7);
            tu_remove_tree(dir);
            free(dir);
        }
}
END_TEST

/* A problem file in a sub-folder names its .npy files relative to its own
 * folder; the same file named twice is recorded once. */
START_TEST(test_npy_in_problem_file)
{
    char *dir = tu_tmpdir();
    char sub[512], path[600];
    snprintf(sub, sizeof sub, "%s/p", dir);
    snprintf(path, sizeof path, "mkdir '%s'", sub);
    ck_assert_int_eq(system(path), 0);
    write_client_files(sub, 0, 0, NULL);
    snprintf(path, sizeof path, "%s/problem.json", sub);
    ck_assert_int_eq(tu_write(path,
        "{\"format\": \"pflref-problem/1\", \"clients\": ["
        "{\"X\": \"c0_X.npy\", \"y\": \"c0_y.npy\"},"
        "{\"X\": \"c0_X.npy\", \"y\": \"c0_y.npy\"}]}"), 0);
    const char *spec =
        "{\"format\": \"pflref-spec/1\", \"name\": \"f\", \"model\": " LINEAR
        ", \"problem\": {\"file\": \"p/problem.json\"}, \"algorithm\": "
        "{\"name\": \"fedavg\", \"hyperparameters\": {\"eta\": 0.05}}, "
        "\"schedule\": {\"kind\": \"generate\", \"rounds\": 1, "
        "\"clients_per_round\": 2, \"local\": {\"steps\": 1, "
        "\"batch_size\": 0}}}";
    char *r = run_in(spec, dir);
    json_t *prob;
    char *rest = without_problem(r, &prob);
    ck_assert_uint_eq(json_array_size(json_object_get(prob, "data_files")),
                      2);
    char hex[65];
    snprintf(path, sizeof path, "%s/c0_X.npy", sub);
    sha256sum(path, hex);
    ck_assert_str_eq(recorded_sha(prob, "c0_X.npy"), hex);
    json_decref(prob);
    free(rest);
    free(r);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* A '<f8' file is used in place: the problem holds its mapping and owns
 * only the other arrays (pflref_problem_bytes_owned / _mapped). */
START_TEST(test_npy_mapped_not_copied)
{
    char *dir = tu_tmpdir();
    write_client_files(dir, 0, 0, NULL);
    char spec[2048];
    snprintf(spec, sizeof spec,
             "{\"format\": \"pflref-spec/1\", \"name\": \"m\", \"model\": "
             LINEAR ", \"problem\": {\"clients\": [{\"X\": \"c0_X.npy\", "
             "\"y\": \"c0_y.npy\", \"X_test\": \"c0_Xt.npy\", \"y_test\": "
             "\"c0_yt.npy\"}]}, \"algorithm\": {\"name\": \"fedavg\", "
             "\"hyperparameters\": {\"eta\": 0.05}}, \"schedule\": {\"kind\":"
             " \"generate\", \"rounds\": 1, \"clients_per_round\": 1, "
             "\"local\": {\"steps\": 1, \"batch_size\": 0}}}");
    pflref_spec *s = NULL;
    pflref_error err;
    ck_assert_int_eq(pflref_spec_parse(spec, strlen(spec), dir, &s, &err),
                     PFLREF_OK);
    const pflref_problem *p = s->problem;
    const pflref_client *c = &p->clients[0];
    ck_assert_uint_eq(c->borrowed, PFLREF_BORROWED_TRAIN_X |
                                       PFLREF_BORROWED_TRAIN_Y |
                                       PFLREF_BORROWED_TEST_Y);
    ck_assert_uint_eq(p->n_held, 3);
    /* each file is 128 bytes of header plus its data */
    ck_assert_uint_eq(pflref_problem_bytes_mapped(p),
                      (128 + 5 * 3 * 8) + (128 + 5 * 8) + (128 + 3 * 8));
    /* owned: the problem, one client, three held records, X_test widened
     * (3 × 3 doubles) */
    ck_assert_uint_eq(pflref_problem_bytes_owned(p),
                      sizeof *p + sizeof *c + 3 * sizeof(pflref_held) +
                          9 * sizeof(double));
    ck_assert_double_eq(c->train.X[4 * 3 + 2], feature(0, 4, 2, 0));
    ck_assert_double_eq(c->test.X[2 * 3 + 1], (double)(float)feature(0, 2, 1,
                                                                     1));
    pflref_spec_free(s);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* Files written by NumPy itself (np.save, np.savez with its ZIP64 local
 * headers, np.savez_compressed, format versions 2.0 and 3.0 through
 * numpy.lib.format), read through the spec reader: the values are the
 * closed forms NumPy was given (i/8 − 1 for X, i mod 3 for y), exactly.
 * Skipped (with a note) when /usr/bin/python3 has no numpy. */
START_TEST(test_npy_written_by_numpy)
{
    if (system("/usr/bin/python3 -c 'import numpy' 2>/dev/null") != 0) {
        fprintf(stderr, "test_npy_written_by_numpy: no numpy, skipped\n");
        return;
    }
    char *dir = tu_tmpdir();
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && /usr/bin/python3 -c \""
             "import numpy as np; from numpy.lib import format as F\n"
             "X = np.arange(12.0).reshape(4, 3) / 8 - 1\n"
             "y = np.arange(4) %% 3\n"
             "np.save('X.npy', X); np.save('y.npy', y.astype(np.uint8))\n"
             "np.savez('s.npz', X=X, y=y.astype(np.int64))\n"
             "np.savez_compressed('c.npz', X=X.astype(np.float32), "
             "y=y.astype(np.int32))\n"
             "F.write_array(open('X2.npy', 'wb'), X, version=(2, 0))\n"
             "F.write_array(open('X3.npy', 'wb'), X, version=(3, 0))\n"
             "\"", dir);
    ck_assert_int_eq(system(cmd), 0);
    static const char *const pairs[][2] = {
        {"X.npy", "y.npy"}, {"s.npz:X", "s.npz:y"}, {"c.npz:X.npy", "c.npz:y"},
        {"X2.npy", "y.npy"}, {"X3.npy", "y.npy"}};
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        char spec[1024];
        snprintf(spec, sizeof spec,
                 "{\"format\": \"pflref-spec/1\", \"name\": \"np\", "
                 "\"model\": " SOFTMAX ", \"problem\": {\"clients\": "
                 "[{\"X\": \"%s\", \"y\": \"%s\"}]}, \"algorithm\": "
                 "{\"name\": \"fedavg\", \"hyperparameters\": {\"eta\": "
                 "0.1}}, \"schedule\": {\"kind\": \"generate\", "
                 "\"rounds\": 1, \"clients_per_round\": 1, \"local\": "
                 "{\"steps\": 1, \"batch_size\": 0}}}",
                 pairs[k][0], pairs[k][1]);
        pflref_spec *s = NULL;
        pflref_error err;
        ck_assert_msg(pflref_spec_parse(spec, strlen(spec), dir, &s, &err) ==
                          PFLREF_OK,
                      "%s: %s: %s", pairs[k][0], err.where, err.message);
        const pflref_data *T = &s->problem->clients[0].train;
        ck_assert_uint_eq(T->n, 4);
        for (size_t i = 0; i < 12; i++)
            ck_assert_double_eq(T->X[i], (double)i / 8.0 - 1.0);
        for (size_t i = 0; i < 4; i++)
            ck_assert_double_eq(T->y[i], (double)(i % 3));
        pflref_spec_free(s);
    }
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* release() for test_problem_hold: counts its calls in *(int *)addr. */
static void count_release(void *addr, size_t len)
{
    ck_assert_uint_eq(len, 24);
    ++*(int *)addr;
}

/* pflref_problem_hold takes ownership in every case; the byte counts of a
 * problem split owned from held memory; the data limit is the machine's
 * memory, at least 64 MiB on any machine the tests run on. */
START_TEST(test_problem_hold)
{
    int released = 0;
    pflref_error err;
    ck_assert_int_eq(pflref_problem_hold(NULL, &released, 24, count_release,
                                         &err), PFLREF_EINVAL);
    ck_assert_int_eq(released, 1);
    ck_assert_uint_eq(pflref_problem_bytes_owned(NULL), 0);
    ck_assert_uint_eq(pflref_problem_bytes_mapped(NULL), 0);
    pflref_model m;
    ck_assert_int_eq(pflref_model_init(&m, PFLREF_MODEL_LINEAR,
                                       PFLREF_LOSS_SQUARED, 3, 1, 0, 0, &err),
                     PFLREF_OK);
    pflref_problem *p = pflref_problem_alloc(&m, 2);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(pflref_problem_hold(p, &released, 24, NULL, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "release");
    ck_assert_int_eq(pflref_problem_hold(p, &released, 24, count_release,
                                         &err), PFLREF_OK);
    ck_assert_int_eq(pflref_data_alloc(&p->clients[0].train, &m, 5, &err),
                     PFLREF_OK);
    /* client 1's X borrowed from "held" memory: not counted as owned */
    static double X[6] = {1, 2, 3, 4, 5, 6};
    p->clients[1].train = (pflref_data){.n = 2, .X = X, .y = NULL};
    p->clients[1].borrowed = PFLREF_BORROWED_TRAIN_X;
    ck_assert_uint_eq(pflref_problem_bytes_owned(p),
                      sizeof *p + 2 * sizeof(pflref_client) +
                          sizeof(pflref_held) + (5 * 3 + 5) * sizeof(double));
    ck_assert_uint_eq(pflref_problem_bytes_mapped(p), 24);
    ck_assert_uint_ge(pflref_data_limit_bytes(), (size_t)64 << 20);
    pflref_problem_free(p);   /* frees client 0, not X; releases once */
    ck_assert_int_eq(released, 2);
}
END_TEST

Suite *npy_suite(void)
{
    Suite *s = suite_create("npy");
    TCase *tc = tcase_create("same");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_npy_linear_same_as_json);
    tcase_add_test(tc, test_npy_classifiers_same_as_json);
    tcase_add_test(tc, test_npz_same_as_json);
    tcase_add_test(tc, test_npy_in_problem_file);
    tcase_add_test(tc, test_npy_mapped_not_copied);
    tcase_add_test(tc, test_npy_written_by_numpy);
    tcase_add_test(tc, test_problem_hold);
    suite_add_tcase(s, tc);
    npy_bad_cases(s);
    npy_lift_cases(s);
    return s;
}
