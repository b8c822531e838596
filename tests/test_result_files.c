/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_result_files.c: the result writer (ref/io/emit.c,
 * ref/io/result.c) and the files form of a result (ref/io/result_files.c,
 * ref/io/npy_write.c; docs/formats.md "Arrays in files"; docs/bad-inputs.md
 * O1-O8).
 *
 * The writer: the emitter's strings, separators and literals are
 * jansson's bytes; the result of every algorithm is a document that
 * jansson reads, whose every real is written as its shortest round-trip
 * text (pflref_dtoa, tests/test_dtoa.c), and that jansson, writing it
 * again, gives back with the same values.
 *
 * The files form, through `pflref run`: which files are written, their
 * references and manifest (SHA-256 and size of each file), their numbers
 * equal to the inline result's bit for bit (read back by pflref's own .npy
 * reader), the trajectory's ranges contiguous, a rerun byte-identical,
 * the inline_max threshold at both sides, -o - refused, each refusal and a
 * failure midway (a file size limit) leaving the folder as it was, and the
 * bad values of output.arrays and output.inline_max.  The bytes against
 * NumPy's np.save are python/tests/test_result_files.py's.
 *
 * Every file and folder is made in the test's own temporary folder; each
 * command runs under timeout(1).
 */
#define _DEFAULT_SOURCE
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "pflref/dtoa.h"
#include "io/emit.h"
#include "io/npy.h"
#include "io/npy_write.h"
#include "io/sha256.h"
#include "suites.h"
#include "testutil.h"

/* A command still running after this long is stuck. */
#define HANG_SECONDS 60

/* APFL on a linear model (P = 3, N = 3): w0, final.w, final.alpha of 3
 * numbers, final.v of 9, a step-level trajectory. */
#define APFL "golden/apfl/worked-linear-adaptive-decay.json"

/* ---- helpers ------------------------------------------------------------ */

/* How this file runs pflref (tu_cli_with): in folder d, after the shell
 * words pre (NULL: none), under timeout(1), "$R" the repository. */
#define IN(d, pre)                                                         \
    (&(const tu_cli_options){.cwd = (d), .prefix = (pre),                  \
                             .hang_seconds = HANG_SECONDS, .repo = 1})

/* A whole file, binary (*len its size), or NULL. */
static unsigned char *read_bytes(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    unsigned char *buf = NULL;
    size_t n = 0, cap = 0, k;
    do {
        if (cap - n < 4096) {
            cap = cap * 2 + 4096;
            buf = realloc(buf, cap + 1);
            ck_assert_ptr_nonnull(buf);
        }
        k = fread(buf + n, 1, cap - n, f);
        n += k;
    } while (k > 0);
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Run and require exit 0. */
static void run_ok(const char *cwd, const char *args)
{
    char *err;
    const int status = tu_cli_with(IN(cwd, NULL), args, NULL, &err);
    ck_assert_msg(status == 0, "pflref %s: exit %d: %s", args, status, err);
    free(err);
}

static json_t *load_json(const char *path)
{
    json_error_t e;
    json_t *doc = json_load_file(path, 0, &e);
    ck_assert_msg(doc != NULL, "%s: %s", path, e.text);
    return doc;
}

/* The numbers of a JSON array (nested arrays flattened, row-major) into
 * out (at most cap); their count. */
static size_t flatten(const json_t *a, double *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *x = json_array_get(a, i);
        if (json_is_array(x)) {
            n += flatten(x, out + n, cap - n);
        } else {
            ck_assert_msg(json_is_number(x) && n < cap, "not a number");
            out[n++] = json_number_value(x);
        }
    }
    return n;
}

/* The file of a reference ("r.arrays/final.v.npy", relative to dir) read
 * with pflref's own .npy reader: its shape and numbers. */
static double *load_npy(const char *dir, const char *ref, size_t *rows,
                        size_t *cols)
{
    char *path = tu_join(dir, ref);
    pflref_npy_array a;
    pflref_error err;
    ck_assert_msg(pflref_npy_load(path, ref, "test", &a, NULL, &err) ==
                      PFLREF_OK,
                  "%s: %s", ref, err.message);
    ck_assert_int_eq(a.h.dtype, PFLREF_NPY_F8);
    *rows = a.h.shape[0];
    *cols = a.h.ndim == 2 ? a.h.shape[1] : 0;
    double *x = malloc(a.h.count * sizeof *x + 1);
    ck_assert_ptr_nonnull(x);
    memcpy(x, a.data, a.h.count * sizeof *x);
    if (a.map != NULL)
        pflref_npy_unmap(a.map, a.map_len);
    else
        free(a.data);
    free(path);
    return x;
}

/* x and y hold the same n doubles, bit for bit. */
static void assert_same_bits(const double *x, const double *y, size_t n,
                             const char *what)
{
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(memcmp(&x[i], &y[i], sizeof x[i]) == 0,
                      "%s[%zu]: %.17g in the file, %.17g inline", what, i,
                      x[i], y[i]);
}

/* 1 when dir/rel exists. */
static int exists_in(const char *dir, const char *rel)
{
    char *p = tu_join(dir, rel);
    const int e = tu_exists(p);
    free(p);
    return e;
}

/* The number of entries of the folder dir/rel. */
static int tu_entries_in(const char *dir, const char *rel)
{
    char *p = tu_join(dir, rel);
    const int n = tu_entries(p);
    free(p);
    return n;
}

/* The JSON document at dir/rel. */
static json_t *load_in(const char *dir, const char *rel)
{
    char *p = tu_join(dir, rel);
    json_t *doc = load_json(p);
    free(p);
    return doc;
}

/* ---- the formatter and the emitter -------------------------------------- */

/* jansson's dump of a string (json_dumps of [s]) without the brackets;
 * NULL when jansson refuses s (not UTF-8). */
static char *jansson_string(const char *s)
{
    json_t *v = json_string(s);
    if (v == NULL)
        return NULL;
    json_t *a = json_array();
    json_array_append_new(a, v);
    char *d = json_dumps(a, JSON_COMPACT);
    json_decref(a);
    size_t n = strlen(d);
    memmove(d, d + 1, n - 2);
    d[n - 2] = '\0';
    return d;
}

/* Strings are escaped as jansson escapes them (every byte 0x01-0x7F, and
 * UTF-8 of 2, 3 and 4 bytes copied); what jansson refuses as UTF-8 the
 * emitter refuses (PFLREF_EINVAL). */
START_TEST(test_emit_strings_like_jansson)
{
    char all[128];
    for (int c = 1; c < 128; c++)
        all[c - 1] = (char)c;
    all[127] = '\0';
    const char *const good[] = {
        all, "", "plain", "é", "\xe2\x80\xa8 \xe2\x82\xac", "\xf0\x9f\x98\x80",
        "\xf4\x8f\xbf\xbf", "a\"b\\c/d\x7f", "\xef\xbf\xbf \xed\x9f\xbf"};
    const char *const bad[] = {
        "\x80", "\xc0\x80", "\xc1\xbf", "\xe0\x80\x80", "\xed\xa0\x80",
        "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xff", "\xe2\x82",
        "ok \xf0\x9f\x98", "\xc3\x28"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        pflref_emit e;
        pflref_error err;
        pflref_emit_init(&e, 0, &err);
        pflref_emit_string(&e, good[i]);
        char *text, *want = jansson_string(good[i]);
        ck_assert_ptr_nonnull(want);
        ck_assert_int_eq(pflref_emit_finish(&e, &text, NULL), PFLREF_OK);
        ck_assert_msg(strcmp(text, want) == 0, "string %zu: %s, jansson %s",
                      i, text, want);
        ck_assert(pflref_emit_utf8_valid(good[i]));
        free(text);
        free(want);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_msg(jansson_string(bad[i]) == NULL, "jansson takes %zu", i);
        ck_assert_msg(!pflref_emit_utf8_valid(bad[i]), "bad %zu is valid", i);
        pflref_emit e;
        pflref_error err;
        pflref_emit_init(&e, 0, &err);
        pflref_emit_key(&e, bad[i]);
        pflref_emit_null(&e);   /* nothing after a failure */
        char *text;
        ck_assert_int_eq(pflref_emit_finish(&e, &text, NULL), PFLREF_EINVAL);
        ck_assert_ptr_null(text);
        ck_assert_msg(strstr(err.message, "not valid UTF-8") != NULL, "%s",
                      err.message);
    }
}
END_TEST

/* A document of every kind of value, nested and empty containers among
 * them: the emitter's bytes are the hand-written ones (jansson's layout,
 * JSON_COMPACT and JSON_PRESERVE_ORDER, with each real's shortest text),
 * and jansson reads them to the same values; a non-finite real is a
 * failure (PFLREF_EINTERNAL). */
START_TEST(test_emit_document_like_jansson)
{
    static const double x[] = {2.385, -0.0, 1e22, 5e-324};
    static const size_t idx[] = {0, 7, 18446744073709551615ULL / 2};
    pflref_emit e;
    pflref_error err;
    pflref_emit_init(&e, 1, &err);   /* grows from one byte */
    pflref_emit_object_begin(&e);
    pflref_emit_key(&e, "a");
    pflref_emit_reals(&e, x, 4);
    pflref_emit_key(&e, "m");
    pflref_emit_matrix(&e, x, 2, 2);
    pflref_emit_key(&e, "i");
    pflref_emit_indices(&e, idx, 3);
    pflref_emit_key(&e, "e");
    pflref_emit_array_begin(&e);
    pflref_emit_array_begin(&e);
    pflref_emit_array_end(&e);
    pflref_emit_object_begin(&e);
    pflref_emit_object_end(&e);
    pflref_emit_reals(&e, x, 0);
    pflref_emit_array_end(&e);
    pflref_emit_key(&e, "n");
    pflref_emit_integer(&e, -9223372036854775807LL - 1);
    pflref_emit_key(&e, "t");
    pflref_emit_bool(&e, 1);
    pflref_emit_key(&e, "f");
    pflref_emit_bool(&e, 0);
    pflref_emit_key(&e, "z");
    pflref_emit_null(&e);
    pflref_emit_key(&e, "r");
    pflref_emit_real(&e, -1.5);
    pflref_emit_key(&e, "s");
    pflref_emit_size(&e, 42);
    pflref_emit_object_end(&e);
    char *text;
    size_t len;
    ck_assert_int_eq(pflref_emit_finish(&e, &text, &len), PFLREF_OK);
    ck_assert_uint_eq(len, strlen(text));
    json_error_t je;
    json_t *doc = json_loads(text, 0, &je);
    ck_assert_msg(doc != NULL, "%s: %s", text, je.text);
    ck_assert_str_eq(text, "{\"a\":[2.385,-0.0,1e+22,5e-324],\"m\":"
                     "[[2.385,-0.0],[1e+22,5e-324]],\"i\":[0,7,"
                     "9223372036854775807],\"e\":[[],{},[]],\"n\":"
                     "-9223372036854775808,\"t\":true,\"f\":false,\"z\":null,"
                     "\"r\":-1.5,\"s\":42}");
    json_t *a = json_object_get(doc, "a");
    for (size_t j = 0; j < 4; j++) {
        const double y = json_real_value(json_array_get(a, j));
        ck_assert_msg(memcmp(&y, &x[j], sizeof y) == 0, "a[%zu]", j);
    }
    free(text);
    json_decref(doc);
    pflref_emit_init(&e, 0, &err);
    pflref_emit_real(&e, NAN);
    ck_assert_int_eq(pflref_emit_finish(&e, &text, NULL), PFLREF_EINTERNAL);
    ck_assert_ptr_null(text);
}
END_TEST

/* The result of each of these vectors (every algorithm, and the shapes of
 * result that only some have: FedFomo's peers and draws, Ditto's personal
 * batches, pFedHN's hypernetwork, IFCA's theta0, BN, LoRA's init, data in
 * .npy files): every real of the text (a number token with a '.' or an
 * exponent) is the shortest round-trip text of its value, integers stay
 * integers, and jansson reads the text and, writing it again, gives back
 * the same values. */
START_TEST(test_result_text_is_jansson_round_trip)
{
    static const char *const VECTORS[] = {
        "golden/fedavg/worked-samples.json", APFL,
        "golden/ifca/worked-given-models-linear.json",
        "golden/pfedhn/worked-linear-bias.json",
        "golden/ditto/worked-linear-pfllib-separate.json",
        "golden/seed000/fedavg-ft.json", "golden/seed000/local.json"};
    char *dirs[] = {"fedfomo", "fedbn", "lora", "cfl", "interp", "perfedavg",
                    "pfedme", "pflego", "fedalt", "fedsim", "prox",
                    "finetune", "local"};
    const size_t nv = sizeof VECTORS / sizeof VECTORS[0];
    const size_t nd = sizeof dirs / sizeof dirs[0];
    for (size_t k = 0; k < nv + nd; k++) {
        char rel[256], cmd[512];
        if (k < nv) {
            snprintf(rel, sizeof rel, "%s", VECTORS[k]);
        } else {   /* the first vector of the folder, by name */
            snprintf(cmd, sizeof cmd, "cd '%s/golden/%s' && ls *.json | head -n 1",
                     getenv("PFLREF_ROOT") ? getenv("PFLREF_ROOT") : ".",
                     dirs[k - nv]);
            FILE *p = popen(cmd, "r");
            char name[200] = "";
            ck_assert_ptr_nonnull(fgets(name, sizeof name, p));
            pclose(p);
            name[strcspn(name, "\n")] = '\0';
            snprintf(rel, sizeof rel, "golden/%s/%s", dirs[k - nv], name);
        }
        char *path = tu_repo_path(rel), *text = NULL, dir[PFLREF_PATH_MAX];
        char *spec = tu_read(path);
        ck_assert_ptr_nonnull(spec);
        pflref_file_folder(path, dir, sizeof dir);
        pflref_error err;
        ck_assert_msg(pflref_spec_run_text(spec, strlen(spec), dir, NULL,
                                           &text, &err) == PFLREF_OK,
                      "%s: %s: %s", rel, err.where, err.message);
        json_error_t je;
        json_t *doc = json_loads(text, 0, &je);
        ck_assert_msg(doc != NULL, "%s: %s", rel, je.text);
        char *again = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER |
                                          JSON_REAL_PRECISION(17));
        size_t reals = 0;
        for (const char *c = text; *c != '\0'; c++) {
            if (*c == '"') {             /* a string: skip to its end */
                for (c++; *c != '"'; c++)
                    if (*c == '\\')
                        c++;
                continue;
            }
            if (*c != '-' && (*c < '0' || *c > '9'))
                continue;
            const size_t n = strspn(c, "-+0123456789.eE");
            char token[64], want[PFLREF_DTOA_MAX];
            ck_assert_uint_lt(n, sizeof token);
            memcpy(token, c, n);
            token[n] = '\0';
            if (strpbrk(token, ".eE") != NULL) {
                pflref_dtoa(strtod(token, NULL), want);
                ck_assert_msg(strcmp(token, want) == 0, "%s: real %s is "
                              "not the shortest text %s", rel, token, want);
                reals++;
            }
            c += n - 1;
        }
        ck_assert_msg(reals > 0, "%s: no reals", rel);
        json_t *back = json_loads(again, 0, &je);
        ck_assert_msg(json_equal(doc, back), "%s", rel);
        json_decref(back);
        json_decref(doc);
        free(again);
        free(text);
        free(spec);
        free(path);
    }
}
END_TEST

/* The streamed SHA-256 is the one-shot one, in any cut of the data. */
START_TEST(test_sha256_stream)
{
    unsigned char data[1000];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (unsigned char)(i * 7 + 3);
    char want[65], got[65];
    pflref_sha256_hex(data, sizeof data, want);
    const size_t cuts[] = {0, 1, 63, 64, 65, 999, 1000};
    for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
        pflref_sha256_stream *s = pflref_sha256_begin();
        ck_assert_ptr_nonnull(s);
        pflref_sha256_update(s, data, cuts[k]);
        pflref_sha256_update(s, data + cuts[k], sizeof data - cuts[k]);
        ck_assert(pflref_sha256_end(s, got));
        ck_assert_str_eq(got, want);
    }
    ck_assert(!pflref_sha256_end(NULL, got));
}
END_TEST

/* The header of np.save, format 1.0: the dict, NumPy's 21 − digits growth
 * room, padding to 64 bytes, '\n'; lengths and text checked here, the
 * bytes against NumPy in python/tests/test_result_files.py. */
START_TEST(test_npy_header)
{
    unsigned char h[PFLREF_NPY_HEADER_MAX];
    size_t n = pflref_npy_header_f8(3, 0, h);
    ck_assert_uint_eq(n, 128);
    ck_assert_int_eq(memcmp(h, "\x93NUMPY\x01\x00\x76\x00", 10), 0);
    const char dict[] = "{'descr': '<f8', 'fortran_order': False, "
                        "'shape': (3,), }";
    ck_assert_int_eq(memcmp(h + 10, dict, sizeof dict - 1), 0);
    for (size_t i = 10 + sizeof dict - 1; i < n - 1; i++)
        ck_assert_int_eq(h[i], ' ');
    ck_assert_int_eq(h[n - 1], '\n');
    const size_t shapes[][2] = {{1, 1}, {2, 3}, {20, 203530},
                                {12345678901234567890ULL, 0},
                                {18446744073709551615ULL, 18446744073709551615ULL}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        n = pflref_npy_header_f8(shapes[k][0], shapes[k][1], h);
        ck_assert_msg(n % 64 == 0 && n <= PFLREF_NPY_HEADER_MAX, "%zu", n);
        ck_assert_uint_eq(h[8] + 256u * h[9], n - 10);
        char shape[64];
        if (shapes[k][1] == 0)
            snprintf(shape, sizeof shape, "'shape': (%zu,), }", shapes[k][0]);
        else
            snprintf(shape, sizeof shape, "'shape': (%zu, %zu), }",
                     shapes[k][0], shapes[k][1]);
        char text[PFLREF_NPY_HEADER_MAX + 1];
        memcpy(text, h + 10, n - 10);
        text[n - 10] = '\0';
        ck_assert_msg(strstr(text, shape) != NULL, "%s", shape);
        ck_assert_int_eq(h[n - 1], '\n');
    }
}
END_TEST

/* ---- the files form ----------------------------------------------------- */

/* APFL with every array in a file (--inline-max 0): w0, final.w, final.v,
 * final.alpha and trajectory.npy, and nothing else, in the folder
 * r.arrays; each referenced as "r.arrays/NAME.npy"; the manifest lists
 * them in document order with the SHA-256 and size of each file; every
 * number equals the inline result's, bit for bit; the trajectory's
 * records are ranges, contiguous from 0 to the file's length, each the
 * inline record's value. */
START_TEST(test_files_form_writes_the_files)
{
    char *dir = tu_tmpdir();
    run_ok(dir, "run $R/" APFL " -o inline.json");
    run_ok(dir, "run $R/" APFL " -o r.json --arrays files --inline-max 0");
    char *folder = tu_join(dir, "r.arrays");
    ck_assert_int_eq(tu_entries(folder), 5);
    json_t *in = load_in(dir, "inline.json");
    json_t *doc = load_in(dir, "r.json");
    static const char *const NAMES[] = {"w0", "final.w", "final.v",
                                        "final.alpha", "trajectory"};
    json_t *files = json_object_get(doc, "array_files");
    ck_assert_uint_eq(json_array_size(files), 5);
    double *want = malloc(4096 * sizeof *want);
    for (size_t k = 0; k < 5; k++) {
        char ref[64];
        snprintf(ref, sizeof ref, "r.arrays/%s.npy", NAMES[k]);
        json_t *f = json_array_get(files, k);
        ck_assert_str_eq(json_string_value(json_object_get(f, "path")), ref);
        char *path = tu_join(dir, ref);
        size_t len;
        unsigned char *bytes = read_bytes(path, &len);
        ck_assert_ptr_nonnull(bytes);
        char hex[65];
        pflref_sha256_hex(bytes, len, hex);
        ck_assert_str_eq(json_string_value(json_object_get(f, "sha256")), hex);
        ck_assert_int_eq(json_integer_value(json_object_get(f, "bytes")),
                         (json_int_t)len);
        free(bytes);
        free(path);
        /* the reference in place of the numbers, and the numbers */
        const json_t *at = k == 0 ? json_object_get(doc, "w0")
                           : k == 4 ? json_object_get(doc, "trajectory_values")
                                    : json_object_get(json_object_get(doc, "final"),
                                                      NAMES[k] + 6);
        ck_assert_str_eq(json_string_value(at), ref);
        size_t rows, cols, n = 0;
        double *x = load_npy(dir, ref, &rows, &cols);
        if (k == 4) {   /* every inline record's value, in order */
            json_t *tr = json_object_get(in, "trajectory");
            for (size_t r = 0; r < json_array_size(tr); r++)
                n += flatten(json_object_get(json_array_get(tr, r), "value"),
                             want + n, 4096 - n);
        } else {
            const json_t *v = k == 0 ? json_object_get(in, "w0")
                                     : json_object_get(json_object_get(in, "final"),
                                                       NAMES[k] + 6);
            n = flatten(v, want, 4096);
            ck_assert_uint_eq(cols, k == 2 ? 3 : 0);
        }
        ck_assert_uint_eq(rows * (cols ? cols : 1), n);
        assert_same_bits(x, want, n, NAMES[k]);
        free(x);
    }
    /* the ranges: contiguous, each the inline record's length */
    json_t *tr = json_object_get(doc, "trajectory"),
           *tin = json_object_get(in, "trajectory");
    ck_assert_uint_eq(json_array_size(tr), json_array_size(tin));
    json_int_t next = 0;
    for (size_t r = 0; r < json_array_size(tr); r++) {
        json_t *v = json_object_get(json_array_get(tr, r), "value");
        ck_assert_msg(json_is_object(v), "record %zu is not ranged", r);
        ck_assert_int_eq(json_integer_value(json_object_get(v, "offset")), next);
        const json_int_t c = json_integer_value(json_object_get(v, "count"));
        ck_assert_int_eq(c, (json_int_t)json_array_size(
                                json_object_get(json_array_get(tin, r), "value")));
        next += c;
    }
    size_t rows, cols;
    free(load_npy(dir, "r.arrays/trajectory.npy", &rows, &cols));
    ck_assert_int_eq((json_int_t)rows, next);
    /* the metrics stay numbers, the training set's among them (APFL's
     * linear model: train_mse for each model it reports) */
    const char *label;
    json_t *mv;
    size_t models = 0;
    json_object_foreach(json_object_get(doc, "metrics"), label, mv) {
        ck_assert_msg(json_is_array(json_object_get(json_object_get(mv,
                          "per_client"), "train_mse")) &&
                          json_is_object(json_object_get(json_object_get(mv,
                              "summary"), "train_mse")),
                      "metrics.%s has no train_mse in the files form", label);
        models++;
    }
    ck_assert_uint_eq(models, 3);
    /* the rest of the document is the inline one's */
    json_object_del(doc, "array_files");
    json_object_del(doc, "trajectory_values");
    json_object_set(doc, "w0", json_object_get(in, "w0"));
    json_object_set(doc, "final", json_object_get(in, "final"));
    json_object_set(doc, "trajectory", json_object_get(in, "trajectory"));
    ck_assert(json_equal(doc, in));
    free(want);
    json_decref(doc);
    json_decref(in);
    free(folder);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* A rerun, over the folder of the first run, writes the same bytes (the
 * JSON and every file), new inodes; a run in another folder too. */
START_TEST(test_files_form_rerun_is_identical)
{
    char *dir = tu_tmpdir(), *other = tu_tmpdir();
    run_ok(dir, "run $R/" APFL " -o r.json --arrays files --inline-max 2");
    char *a = tu_tree(dir, NULL);
    run_ok(dir, "run $R/" APFL " -o r.json --arrays files --inline-max 2");
    run_ok(other, "run $R/" APFL " -o r.json --arrays files --inline-max 2");
    char *b = tu_tree(dir, NULL), *c = tu_tree(other, NULL);
    static const char *const FILES[] = {
        "r.json", "r.arrays/w0.npy", "r.arrays/final.w.npy",
        "r.arrays/final.v.npy", "r.arrays/final.alpha.npy",
        "r.arrays/trajectory.npy"};
    for (size_t k = 0; k < sizeof FILES / sizeof FILES[0]; k++) {
        char *p = tu_join(dir, FILES[k]), *q = tu_join(other, FILES[k]);
        size_t n1, n2;
        unsigned char *x = read_bytes(p, &n1), *y = read_bytes(q, &n2);
        ck_assert_msg(x != NULL && y != NULL, "%s missing", FILES[k]);
        ck_assert_msg(n1 == n2 && memcmp(x, y, n1) == 0, "%s differs",
                      FILES[k]);
        free(x);
        free(y);
        free(p);
        free(q);
    }
    ck_assert_msg(strcmp(a, b) != 0, "the rerun replaced nothing");
    free(a);
    free(b);
    free(c);
    tu_remove_tree(dir);
    tu_remove_tree(other);
    free(dir);
    free(other);
}
END_TEST

/* Which arrays of r.json are strings (file references): a bit per
 * w0, final.w, final.v, final.alpha, trajectory_values present. */
static unsigned referenced(const char *dir)
{
    json_t *doc = load_in(dir, "r.json");
    json_t *fin = json_object_get(doc, "final");
    unsigned bits = (json_is_string(json_object_get(doc, "w0")) ? 1u : 0u) |
                    (json_is_string(json_object_get(fin, "w")) ? 2u : 0u) |
                    (json_is_string(json_object_get(fin, "v")) ? 4u : 0u) |
                    (json_is_string(json_object_get(fin, "alpha")) ? 8u : 0u) |
                    (json_object_get(doc, "trajectory_values") ? 16u : 0u);
    const int has_files = json_object_get(doc, "array_files") != NULL;
    ck_assert_msg(has_files == (bits != 0), "array_files %s with bits %u",
                  has_files ? "present" : "absent", bits);
    json_decref(doc);
    return bits;
}

/* An array of exactly inline_max numbers stays inline, one of
 * inline_max + 1 goes to a file: w0, final.w, final.alpha have 3, final.v
 * 9; the trajectory's values count together (T of them, from the inline
 * result).  The spec's output.inline_max is read; the CLI's overrides it;
 * --arrays inline overrides the spec's "files". */
START_TEST(test_inline_max_threshold)
{
    char *dir = tu_tmpdir(), args[1024];
    run_ok(dir, "run $R/" APFL " -o inline.json");
    json_t *in = load_in(dir, "inline.json");
    size_t T = 0;
    json_t *tr = json_object_get(in, "trajectory");
    for (size_t r = 0; r < json_array_size(tr); r++)
        T += json_array_size(json_object_get(json_array_get(tr, r), "value"));
    json_decref(in);
    ck_assert_msg(T > 10, "T = %zu", T);
    const struct {
        size_t inline_max;
        unsigned bits;
    } CASES[] = {{3, 4 | 16}, {2, 1 | 2 | 4 | 8 | 16}, {9, 16}, {8, 4 | 16},
                 {T, 0}, {T - 1, 16}};
    for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
        snprintf(args, sizeof args, "run $R/" APFL " -o r.json --arrays files "
                 "--inline-max %zu", CASES[k].inline_max);
        run_ok(dir, args);
        const unsigned bits = referenced(dir);
        ck_assert_msg(bits == CASES[k].bits, "inline_max %zu: %u, not %u",
                      CASES[k].inline_max, bits, CASES[k].bits);
        /* the folder holds the files of this result only: the previous
         * run's that this one does not write are gone, and with none the
         * folder too */
        const int files = __builtin_popcount(bits);
        ck_assert_msg(files > 0 ? tu_entries_in(dir, "r.arrays") == files
                                : !exists_in(dir, "r.arrays"),
                      "inline_max %zu: r.arrays does not hold exactly the "
                      "%d files the result names", CASES[k].inline_max, files);
    }
    /* the spec's output (APFL's vector spec made a spec with output) */
    char *vec = tu_repo_path(APFL), *text = tu_read(vec);
    json_t *v = json_loads(text, 0, NULL);
    json_t *spec = json_deep_copy(json_object_get(v, "spec"));
    json_object_set_new(spec, "output",
                        json_pack("{s:s, s:s, s:i}", "trajectory", "step",
                                  "arrays", "files", "inline_max", 8));
    char *sp = tu_join(dir, "s.json");
    ck_assert_int_eq(json_dump_file(spec, sp, 0), 0);
    run_ok(dir, "run s.json -o r.json");
    ck_assert_uint_eq(referenced(dir), 4 | 16);
    run_ok(dir, "run s.json -o r.json --inline-max 9");
    ck_assert_uint_eq(referenced(dir), 16);
    run_ok(dir, "run s.json -o r.json --arrays inline --inline-max 0");
    ck_assert_uint_eq(referenced(dir), 0);
    /* the default, 256: nothing of this small run in a file, no folder */
    json_object_set_new(spec, "output", json_pack("{s:s}", "arrays", "files"));
    ck_assert_int_eq(json_dump_file(spec, sp, 0), 0);
    char *arrays = tu_join(dir, "r.arrays");
    tu_remove_tree(arrays);
    free(arrays);
    run_ok(dir, "run s.json -o r.json");
    ck_assert_uint_eq(referenced(dir), 0);
    ck_assert(!exists_in(dir, "r.arrays"));
    json_decref(spec);
    json_decref(v);
    free(text);
    free(vec);
    free(sp);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* STEM: the name less a final ".json" only ("r.out" -> r.out.arrays),
 * and a name of its own characters is named in the JSON escaped. */
START_TEST(test_files_form_stem)
{
    char *dir = tu_tmpdir();
    run_ok(dir, "run $R/" APFL " -o r.out --arrays files --inline-max 0");
    ck_assert(exists_in(dir, "r.out.arrays/final.v.npy"));
    run_ok(dir, "run $R/" APFL " -o 'q\"é.json' --arrays files --inline-max 9");
    json_t *doc = load_in(dir, "q\"é.json");
    ck_assert_str_eq(json_string_value(json_object_get(doc, "trajectory_values")),
                     "q\"é.arrays/trajectory.npy");
    json_decref(doc);
    char *p = tu_join(dir, "q\"é.json"), *text = tu_read(p);
    ck_assert_ptr_nonnull(strstr(text, "\"q\\\"é.arrays/trajectory.npy\""));
    free(text);
    free(p);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* -o - (and no -o, and -o /dev/stdout) with the files form: exit 2,
 * output.arrays named, nothing on standard output, before the run; with
 * the spec's "files" overridden by --arrays inline, the text. */
START_TEST(test_files_form_refuses_stdout)
{
    char *dir = tu_tmpdir();
    const char *const ARGS[] = {
        "run $R/" APFL " --arrays files -o -", "run $R/" APFL " --arrays files",
        "run $R/" APFL " --arrays files -o /dev/stdout"};
    char *out, *err;
    for (size_t k = 0; k < 3; k++) {
        const int status = tu_cli_with(IN(dir, NULL), ARGS[k], &out, &err);
        ck_assert_msg(status == 2 && strstr(err, "output.arrays") != NULL &&
                          out[0] == '\0',
                      "%s: exit %d: %s", ARGS[k], status, err);
        free(out);
        free(err);
    }
    ck_assert_int_eq(tu_entries(dir), 0);
    const int status = tu_cli_with(
        IN(dir, NULL), "run $R/" APFL " --arrays inline -o -", &out, &err);
    ck_assert_msg(status == 0 && strncmp(out, "{\"format\"", 9) == 0, "%s",
                  err);
    free(out);
    free(err);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* Each refusal of the files form before anything is written: the
 * folder's tree as it was (kinds, inodes, bytes), no r.json; exit 2 and
 * the path named. */
static void assert_refused(const char *dir, const char *prefix,
                           const char *args, const char *phrase)
{
    size_t n_before, n_after;
    char *before = tu_tree(dir, &n_before);
    char *out, *err;
    const int status = tu_cli_with(IN(dir, prefix), args, &out, &err);
    ck_assert_msg(status == 2 && strstr(err, phrase) != NULL &&
                      out[0] == '\0',
                  "%s: exit %d, stderr: %s (wanted \"%s\")", args, status,
                  err, phrase);
    char *after = tu_tree(dir, &n_after);
    /* the whole trees, .npy bytes (NULs among them) included */
    ck_assert_msg(n_before == n_after &&
                      memcmp(before, after, n_before) == 0,
                  "%s: the folder changed:\n%s\n---\n%s", args, before,
                  after);
    free(out);
    free(err);
    free(before);
    free(after);
}

#define FILES0 " -o r.json --arrays files --inline-max 0"

/* r.arrays a regular file, a FIFO, a dangling link; r.arrays/final.v.npy
 * a folder or read-only; r.json a folder: refused, nothing written. */
START_TEST(test_files_form_refusals_leave_nothing)
{
    char *dir = tu_tmpdir(), *arrays = tu_join(dir, "r.arrays");
    ck_assert_int_eq(tu_write(arrays, "mine\n"), 0);
    assert_refused(dir, NULL, "run $R/" APFL FILES0,
                   "r.arrays exists and is not a folder (a regular file)");
    unlink(arrays);
    ck_assert_int_eq(mkfifo(arrays, 0644), 0);
    assert_refused(dir, NULL, "run $R/" APFL FILES0,
                   "r.arrays exists and is not a folder (a FIFO");
    unlink(arrays);
    ck_assert_int_eq(symlink("gone", arrays), 0);
    assert_refused(dir, NULL, "run $R/" APFL FILES0, "dangling link");
    unlink(arrays);
    ck_assert_int_eq(mkdir(arrays, 0755), 0);
    char *v = tu_join(arrays, "final.v.npy");
    ck_assert_int_eq(mkdir(v, 0755), 0);
    assert_refused(dir, NULL, "run $R/" APFL FILES0,
                   "final.v.npy exists and is not a regular file (a folder)");
    rmdir(v);
    ck_assert_int_eq(tu_write(v, "theirs\n"), 0);
    ck_assert_int_eq(chmod(v, 0444), 0);
    assert_refused(dir, NULL, "run $R/" APFL FILES0, "the file is read-only");
    unlink(v);
    char *json = tu_join(dir, "r.json");
    ck_assert_int_eq(mkdir(json, 0755), 0);
    assert_refused(dir, NULL, "run $R/" APFL FILES0,
                   "r.json exists and is not a regular file (a folder)");
    free(json);
    free(v);
    free(arrays);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* A softmax problem (P = 105) whose final.v (3 × 105 numbers, 2648 bytes)
 * exceeds a file size limit its w0.npy (968 bytes) is under: w0.npy is
 * written, final.v.npy fails midway (EFBIG; SIGXFSZ ignored), and what
 * was written goes: no r.json, no r.arrays (made by the run), or the
 * r.arrays that was there, empty, as it was. */
START_TEST(test_files_form_failure_midway_leaves_nothing)
{
    char *dir = tu_tmpdir(), *spec = tu_join(dir, "s.json");
    ck_assert_int_eq(tu_write(spec,
        "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"softmax\", "
        "\"d\": 20, \"k\": 5, \"bias\": true}, \"problem\": {\"generator\": "
        "{\"kind\": \"dirichlet\", \"K\": 3, \"n_min\": 2, \"n_max\": 4, "
        "\"n_test\": 2, \"seed\": 5}}, \"init\": {\"kind\": \"gaussian\", "
        "\"seed\": 3, \"sd\": 0.5}, \"algorithm\": {\"name\": \"local\", "
        "\"hyperparameters\": {\"eta\": 0.125}}, \"schedule\": {\"kind\": "
        "\"generate\", \"rounds\": 1, \"local\": {\"steps\": 1}}, \"output\": "
        "{\"trajectory\": \"none\", \"arrays\": \"files\", \"inline_max\": 0}}"),
        0);
    /* ulimit -f counts 512-byte blocks in dash, 1024 in bash: 2 blocks is
     * above 968 bytes and below 2648 in both */
    const char *limit = "ulimit -f 2 && trap '' XFSZ &&";
    run_ok(dir, "run s.json -o whole.json");   /* no limit: it works */
    ck_assert(exists_in(dir, "whole.arrays/final.v.npy"));
    assert_refused(dir, limit, "run s.json -o r.json", "File too large");
    ck_assert(!exists_in(dir, "r.arrays"));
    char *arrays = tu_join(dir, "r.arrays");
    ck_assert_int_eq(mkdir(arrays, 0755), 0);
    assert_refused(dir, limit, "run s.json -o r.json", "File too large");
    ck_assert_int_eq(tu_entries(arrays), 0);
    free(arrays);
    free(spec);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* The previous result's files that the new one does not name: removed
 * once the new JSON is written, the folder too when the new result is
 * inline and nothing else is left; what pflref did not write, or no longer
 * holds what it wrote, stays:
 *   run 1 (--inline-max 0): w0, final.w, final.v, final.alpha, trajectory;
 *   then mine.npy (the user's), final.w.npy changed, final.alpha.npy made
 *   a link to a copy of itself (same bytes, not the regular file written);
 *   run 2 (--inline-max 3): final.v and trajectory rewritten, w0.npy gone,
 *   final.w.npy, final.alpha.npy (the link) and mine.npy kept;
 *   run 3 (inline): final.v and trajectory gone, the rest kept, folder too;
 *   the rest removed by hand, run 4 (files) then run 5 (inline): no folder.
 * A previous r.json that is not pflref's (no "build": a candidate) has its
 * files left; a run of another stem leaves r's files alone. */
START_TEST(test_files_form_removes_stale_files)
{
    char *dir = tu_tmpdir(), *arrays = tu_join(dir, "r.arrays");
    run_ok(dir, "run $R/" APFL " -o r.json --arrays files --inline-max 0");
    ck_assert_int_eq(tu_entries(arrays), 5);
    char *mine = tu_join(arrays, "mine.npy"), *fw = tu_join(arrays, "final.w.npy"),
         *fa = tu_join(arrays, "final.alpha.npy"),
         *copy = tu_join(dir, "alpha-copy.npy");
    ck_assert_int_eq(tu_write(mine, "the user's\n"), 0);
    ck_assert_int_eq(rename(fa, copy), 0);
    ck_assert_int_eq(symlink(copy, fa), 0);
    size_t len;
    unsigned char *bytes = read_bytes(fw, &len);
    ck_assert_ptr_nonnull(bytes);
    bytes[len - 1] ^= 1;   /* the last number's last byte changed */
    FILE *f = fopen(fw, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(bytes, 1, len, f), len);
    fclose(f);
    free(bytes);
    run_ok(dir, "run $R/" APFL " -o r.json --arrays files --inline-max 3");
    ck_assert_uint_eq(referenced(dir), 4 | 16);
    ck_assert_msg(!exists_in(dir, "r.arrays/w0.npy"),
                  "w0.npy, written by run 1 and not named by run 2, is left");
    ck_assert_msg(exists_in(dir, "r.arrays/final.v.npy") &&
                      exists_in(dir, "r.arrays/trajectory.npy"),
                  "run 2's files are missing");
    ck_assert_msg(tu_exists(fw), "final.w.npy, changed since run 1 wrote "
                  "it, was removed");
    struct stat sb;
    ck_assert_msg(lstat(fa, &sb) == 0 && S_ISLNK(sb.st_mode),
                  "final.alpha.npy, a link in place of the file run 1 "
                  "wrote, was removed");
    ck_assert_msg(tu_exists(mine), "mine.npy, not pflref's, was removed");
    run_ok(dir, "run $R/" APFL " -o r.json");
    ck_assert_uint_eq(referenced(dir), 0);
    ck_assert_msg(!exists_in(dir, "r.arrays/final.v.npy") &&
                      !exists_in(dir, "r.arrays/trajectory.npy"),
                  "run 2's files are left after the inline run 3");
    ck_assert_int_eq(tu_entries(arrays), 3);   /* final.w, final.alpha, mine */
    unlink(mine);
    unlink(fw);
    unlink(fa);
    run_ok(dir, "run $R/" APFL " -o r.json --arrays files --inline-max 2");
    ck_assert_int_eq(tu_entries(arrays), 5);
    /* another stem's run leaves r's files alone */
    run_ok(dir, "run $R/" APFL " -o q.json");
    ck_assert_int_eq(tu_entries(arrays), 5);
    run_ok(dir, "run $R/" APFL " -o r.json --arrays inline");
    ck_assert_msg(!tu_exists(arrays), "r.arrays is left, empty");
    /* a previous r.json without "build" (not written by pflref) */
    run_ok(dir, "run $R/" APFL " -o r.json --arrays files --inline-max 0");
    json_t *doc = load_in(dir, "r.json");
    json_object_del(doc, "build");
    char *rj = tu_join(dir, "r.json");
    ck_assert_int_eq(json_dump_file(doc, rj, JSON_COMPACT), 0);
    json_decref(doc);
    run_ok(dir, "run $R/" APFL " -o r.json --arrays inline");
    ck_assert_msg(tu_entries(arrays) == 5, "the files of a result pflref "
                  "did not write (no build) were removed");
    free(rj);
    free(copy);
    free(fa);
    free(fw);
    free(mine);
    free(arrays);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* A run that fails midway (a file size limit, as in the test above)
 * removes nothing of the previous result's: run 1 (inline_max 0) wrote
 * w0.npy and final.v.npy; run 2 (inline_max 200) would write only
 * final.v.npy, fails on it, and w0.npy, which it would have removed,
 * stays, with the whole folder as it was. */
START_TEST(test_files_form_failure_keeps_stale_files)
{
    char *dir = tu_tmpdir(), *spec = tu_join(dir, "s.json");
    ck_assert_int_eq(tu_write(spec,
        "{\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"softmax\", "
        "\"d\": 20, \"k\": 5, \"bias\": true}, \"problem\": {\"generator\": "
        "{\"kind\": \"dirichlet\", \"K\": 3, \"n_min\": 2, \"n_max\": 4, "
        "\"n_test\": 2, \"seed\": 5}}, \"init\": {\"kind\": \"gaussian\", "
        "\"seed\": 3, \"sd\": 0.5}, \"algorithm\": {\"name\": \"local\", "
        "\"hyperparameters\": {\"eta\": 0.125}}, \"schedule\": {\"kind\": "
        "\"generate\", \"rounds\": 1, \"local\": {\"steps\": 1}}, \"output\": "
        "{\"trajectory\": \"none\", \"arrays\": \"files\"}}"),
        0);
    run_ok(dir, "run s.json -o r.json --inline-max 0");
    ck_assert(exists_in(dir, "r.arrays/w0.npy"));
    ck_assert(exists_in(dir, "r.arrays/final.v.npy"));
    assert_refused(dir, "ulimit -f 2 && trap '' XFSZ &&",
                   "run s.json -o r.json --inline-max 200", "File too large");
    ck_assert(exists_in(dir, "r.arrays/w0.npy"));
    /* without the limit, the same run removes it */
    run_ok(dir, "run s.json -o r.json --inline-max 200");
    ck_assert(!exists_in(dir, "r.arrays/w0.npy"));
    ck_assert_int_eq(tu_entries_in(dir, "r.arrays"), 1);
    free(spec);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* A candidate result without the training set's accuracy (a classifier's
 * train_accuracy, which pflref writes) is still accepted by `pflref check`
 * (the metrics are optional for candidates): exit 0. */
START_TEST(test_candidate_without_train_metrics_is_checked)
{
    static const char VEC[] = "golden/lora/worked-softmax-ffa.json";
    char *dir = tu_tmpdir();
    run_ok(dir, "run $R/golden/lora/worked-softmax-ffa.json -o c.json");
    json_t *doc = load_in(dir, "c.json");
    const char *label;
    json_t *m;
    size_t dropped = 0;
    json_object_foreach(json_object_get(doc, "metrics"), label, m) {
        dropped += json_object_del(json_object_get(m, "per_client"),
                                   "train_accuracy") == 0;
        dropped += json_object_del(json_object_get(m, "summary"),
                                   "train_accuracy") == 0;
    }
    ck_assert_msg(dropped >= 2, "%s: the result has no train_accuracy", VEC);
    char *cj = tu_join(dir, "c.json");
    ck_assert_int_eq(json_dump_file(doc, cj, JSON_COMPACT), 0);
    json_decref(doc);
    char *out, *err;
    const int status = tu_cli_with(
        IN(dir, NULL), "check $R/golden/lora/worked-softmax-ffa.json c.json",
        &out, &err);
    ck_assert_msg(status == 0, "check of a candidate without "
                  "train_accuracy: exit %d: %s%s", status, out, err);
    free(out);
    free(err);
    free(cj);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* Bad output.arrays and output.inline_max in a spec, bad --arrays and
 * --inline-max: exit 2, the field or option named, nothing written. */
START_TEST(test_bad_output_values)
{
    static const struct {
        const char *output, *where;
    } SPEC[] = {
        {"{\"arrays\": \"npy\"}", "output.arrays: unknown arrays \"npy\" (known: inline, files)"},
        {"{\"arrays\": 1}", "output.arrays: expected a string"},
        {"{\"inline_max\": -1}", "output.inline_max: -1 is out of range [0, 2147483648]"},
        {"{\"inline_max\": 2.5}", "output.inline_max: expected an integer"},
        {"{\"inline_max\": \"7\"}", "output.inline_max: expected an integer"},
        {"{\"inline_max\": 4294967296}", "output.inline_max: 4294967296 is out of range"},
        {"{\"files\": true}", "output.files: unknown field"},
    };
    char *dir = tu_tmpdir(), *vec = tu_repo_path(APFL), *text = tu_read(vec);
    json_t *v = json_loads(text, 0, NULL);
    json_t *spec = json_object_get(v, "spec");
    char *sp = tu_join(dir, "s.json");
    for (size_t k = 0; k < sizeof SPEC / sizeof SPEC[0]; k++) {
        json_object_set_new(spec, "output", json_loads(SPEC[k].output, 0, NULL));
        ck_assert_int_eq(json_dump_file(spec, sp, 0), 0);
        assert_refused(dir, NULL, "run s.json -o r.json", SPEC[k].where);
    }
    static const struct {
        const char *args, *message;
    } CLI[] = {
        {"--arrays npy", "--arrays is inline or files: npy"},
        {"--arrays", "--arrays needs inline or files"},
        {"--inline-max -1", "--inline-max takes a count of numbers from 0 to 2147483648: -1"},
        {"--inline-max 1e3", "--inline-max takes a count"},
        {"--inline-max 2147483649", "--inline-max takes a count"},
        {"--inline-max", "--inline-max needs a count"},
    };
    json_object_del(spec, "output");
    ck_assert_int_eq(json_dump_file(spec, sp, 0), 0);
    for (size_t k = 0; k < sizeof CLI / sizeof CLI[0]; k++) {
        char args[256];
        snprintf(args, sizeof args, "run s.json -o r.json %s", CLI[k].args);
        assert_refused(dir, NULL, args, CLI[k].message);
    }
    json_decref(v);
    free(sp);
    free(text);
    free(vec);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* Every row O1-O8 of docs/bad-inputs.md is a test here. */
START_TEST(test_result_files_catalogue)
{
    static const tu_catalogue_row CLASSES[] = {
        {"O1", "files form to standard output", "test_files_form_refuses_stdout"},
        {"O2", "STEM.arrays not a folder", "test_files_form_refusals_leave_nothing"},
        {"O3", "an array's file not a writable regular file", "test_files_form_refusals_leave_nothing"},
        {"O4", "a write that fails midway", "test_files_form_failure_midway_leaves_nothing"},
        {"O5", "unknown output.arrays", "test_bad_output_values"},
        {"O6", "output.inline_max not a count", "test_bad_output_values"},
        {"O7", "bad --arrays or --inline-max", "test_bad_output_values"},
        {"O8", "a result file name that is not UTF-8", "test_files_form_name_not_utf8"},
    };
    tu_assert_catalogue(CLASSES, sizeof CLASSES / sizeof CLASSES[0], 'O');
}
END_TEST

/* A result file's name that is not UTF-8: the JSON cannot name its
 * folder; refused before the run (exit 2, output.arrays), nothing left;
 * the inline form writes it (a file name, not JSON text). */
START_TEST(test_files_form_name_not_utf8)
{
    char *dir = tu_tmpdir();
    assert_refused(dir, NULL, "run $R/" APFL " -o \"$(printf '\\377.json')\" "
                   "--arrays files", "output.arrays");
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* The C API: pflref_spec_run_text refuses a spec of the files form
 * (PFLREF_EINVAL at output.arrays, no text); pflref_spec_run_output
 * writes it to a file with the override, or returns the inline text;
 * pflref_result_write names a NULL argument. */
START_TEST(test_files_form_c_api)
{
    char *vec = tu_repo_path(APFL), *text = tu_read(vec), *dir = tu_tmpdir();
    json_t *v = json_loads(text, 0, NULL);
    json_t *spec = json_object_get(v, "spec");
    json_object_set_new(spec, "output", json_pack("{s:s, s:s}", "trajectory",
                                                  "step", "arrays", "files"));
    char *st = json_dumps(spec, 0), *res = NULL;
    pflref_error err;
    ck_assert_int_eq(pflref_spec_run_text(st, strlen(st), NULL, NULL, &res,
                                          &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "output.arrays");
    ck_assert_ptr_null(res);
    char *path = tu_join(dir, "r.json");
    pflref_output_override over = {.set_form = 0, .set_inline_max = 1,
                                   .inline_max = 8};
    ck_assert_int_eq(pflref_spec_run_output(st, strlen(st), NULL, NULL, &over,
                                            path, NULL, &err), PFLREF_OK);
    ck_assert_uint_eq(referenced(dir), 4 | 16);
    over = (pflref_output_override){.set_form = 1,
                                    .form = PFLREF_ARRAYS_INLINE};
    ck_assert_int_eq(pflref_spec_run_output(st, strlen(st), NULL, NULL, &over,
                                            NULL, &res, &err), PFLREF_OK);
    ck_assert_ptr_nonnull(strstr(res, "\"final\":{\"w\":["));
    free(res);
    pflref_output_arrays files = {PFLREF_ARRAYS_FILES, 0};
    ck_assert_int_eq(pflref_result_write(NULL, NULL, NULL, NULL, NULL, &files,
                                         &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "path");
    ck_assert_int_eq(pflref_result_write_check(path, &files, &err), PFLREF_OK);
    free(path);
    free(st);
    json_decref(v);
    free(text);
    free(vec);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

Suite *result_files_suite(void)
{
    Suite *s = suite_create("result_files");
    TCase *w = tcase_create("writer");
    tcase_set_timeout(w, 120);
    tcase_add_test(w, test_emit_strings_like_jansson);
    tcase_add_test(w, test_emit_document_like_jansson);
    tcase_add_test(w, test_result_text_is_jansson_round_trip);
    tcase_add_test(w, test_sha256_stream);
    tcase_add_test(w, test_npy_header);
    suite_add_tcase(s, w);
    TCase *f = tcase_create("files");
    tcase_set_timeout(f, 120);
    tcase_add_test(f, test_files_form_writes_the_files);
    tcase_add_test(f, test_files_form_rerun_is_identical);
    tcase_add_test(f, test_inline_max_threshold);
    tcase_add_test(f, test_files_form_stem);
    tcase_add_test(f, test_files_form_refuses_stdout);
    tcase_add_test(f, test_files_form_refusals_leave_nothing);
    tcase_add_test(f, test_files_form_failure_midway_leaves_nothing);
    tcase_add_test(f, test_files_form_removes_stale_files);
    tcase_add_test(f, test_files_form_failure_keeps_stale_files);
    tcase_add_test(f, test_candidate_without_train_metrics_is_checked);
    tcase_add_test(f, test_bad_output_values);
    tcase_add_test(f, test_files_form_name_not_utf8);
    tcase_add_test(f, test_files_form_c_api);
    tcase_add_test(f, test_result_files_catalogue);
    suite_add_tcase(s, f);
    return s;
}
