/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_npy_bad.c: bad .npy and .npz data files, the rows N1–N22 of
 * docs/bad-inputs.md ("Data files").
 *
 * Each row writes a good linear problem (one client, X 5 × 3 '<f8' in
 * X.npy, y 5 '<f8' in y.npy) into a fresh folder, spoils one file, and
 * runs `pflref run s.json -o r.json`: the exit status must be 2, standard
 * error must name the file and say what is wrong (the header field for a
 * header fault), standard output must be empty and no result may be left
 * behind.  test_npy_catalogue ties the rows to the document.
 */
#include <check.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <zip.h>
#include "testutil.h"
#include "test_npy.h"

enum { ROWS = 5, COLS = 3 };

static const char *const GOOD_DICT =
    "{'descr': '<f8', 'fortran_order': False, 'shape': (5, 3), }";

/* The 15 good features and 5 good targets. */
static void good_values(double X[ROWS * COLS], double y[ROWS])
{
    for (size_t i = 0; i < ROWS * COLS; i++)
        X[i] = 0.25 * (double)i - 1.375;
    for (size_t i = 0; i < ROWS; i++)
        y[i] = 2.5 - 0.75 * (double)i;
}

static void path_in(char *out, size_t size, const char *dir, const char *f)
{
    snprintf(out, size, "%s/%s", dir, f);
}

/* X.npy := a header `dict` (version major) over nbytes of the good data. */
static void x_with(const char *dir, int major, const char *dict,
                   size_t nbytes)
{
    double X[ROWS * COLS + 8], y[ROWS];
    good_values(X, y);
    for (size_t i = ROWS * COLS; i < ROWS * COLS + 8; i++)
        X[i] = 0.5;
    unsigned char buf[1024];
    char p[512];
    path_in(p, sizeof p, dir, "X.npy");
    tn_write_bytes(p, buf, tn_npy_bytes(buf, sizeof buf, major, dict, X,
                                        nbytes));
}

static void make_truncated(const char *dir)
{
    x_with(dir, 1, GOOD_DICT, 100);
}
static void make_big_endian(const char *dir)
{
    x_with(dir, 1, "{'descr': '>f8', 'fortran_order': False, "
           "'shape': (5, 3), }", 120);
}
static void make_float16(const char *dir)
{
    x_with(dir, 1, "{'descr': '<f2', 'fortran_order': False, "
           "'shape': (5, 3), }", 30);
}
static void make_uint8_features(const char *dir)
{
    x_with(dir, 1, "{'descr': '|u1', 'fortran_order': False, "
           "'shape': (5, 3), }", 15);
}
static void make_fortran(const char *dir)
{
    x_with(dir, 1, "{'descr': '<f8', 'fortran_order': True, "
           "'shape': (5, 3), }", 120);
}
static void make_wrong_d(const char *dir)
{
    x_with(dir, 1, "{'descr': '<f8', 'fortran_order': False, "
           "'shape': (4, 4), }", 128);
}
static void make_three_dims(const char *dir)
{
    x_with(dir, 2, "{'descr': '<f8', 'fortran_order': False, "
           "'shape': (5, 3, 1), }", 120);
}
static void make_trailing(const char *dir)
{
    x_with(dir, 1, GOOD_DICT, 128);
}
static void make_short_rows(const char *dir)
{
    double y[4] = {1.5, -0.5, 2.25, 0.125};
    char p[512];
    path_in(p, sizeof p, dir, "y.npy");
    tn_write_npy(p, "<f8", 4, 0, y, 8);
}
static void make_length_lies(const char *dir)
{
    x_with(dir, 1, GOOD_DICT, 120);
    char p[512];
    path_in(p, sizeof p, dir, "X.npy");
    FILE *f = fopen(p, "r+b");
    ck_assert_ptr_nonnull(f);
    fseek(f, 8, SEEK_SET);
    fputc(0xA0, f); /* 0x0FA0 = 4000 header bytes, beyond the file */
    fputc(0x0F, f);
    fclose(f);
}
static void make_folder(const char *dir)
{
    char p[512];
    path_in(p, sizeof p, dir, "X.npy");
    unlink(p);
    ck_assert_int_eq(mkdir(p, 0755), 0);
}
static void make_fifo(const char *dir)
{
    char p[512];
    path_in(p, sizeof p, dir, "X.npy");
    unlink(p);
    ck_assert_int_eq(mkfifo(p, 0644), 0);
}
static void make_nan(const char *dir)
{
    double X[ROWS * COLS], y[ROWS];
    good_values(X, y);
    X[7] = NAN;
    char p[512];
    path_in(p, sizeof p, dir, "X.npy");
    tn_write_npy(p, "<f8", ROWS, COLS, X, 8);
}
static void make_bad_magic(const char *dir)
{
    char p[512];
    path_in(p, sizeof p, dir, "X.npy");
    tn_write_bytes(p, "NOTNUMPY and some more bytes", 28);
}
static void make_version4(const char *dir)
{
    x_with(dir, 1, GOOD_DICT, 120);
    char p[512];
    path_in(p, sizeof p, dir, "X.npy");
    FILE *f = fopen(p, "r+b");
    ck_assert_ptr_nonnull(f);
    fseek(f, 6, SEEK_SET);
    fputc(4, f);
    fclose(f);
}
static void make_missing_shape(const char *dir)
{
    x_with(dir, 1, "{'descr': '<f8', 'fortran_order': False, }", 120);
}
static void make_unknown_key(const char *dir)
{
    x_with(dir, 1, "{'descr': '<f8', 'fortran_order': False, "
           "'shape': (5, 3), 'order': 'C', }", 120);
}
static void make_int_targets(const char *dir)
{
    int64_t y[ROWS] = {1, 0, 2, 1, 0};
    char p[512];
    path_in(p, sizeof p, dir, "y.npy");
    tn_write_npy(p, "<i8", ROWS, 0, y, 8);
}
static void make_npz_without_member(const char *dir)
{
    char p[512];
    path_in(p, sizeof p, dir, "a.npz");
    int zerr;
    zip_t *z = zip_open(p, ZIP_CREATE | ZIP_TRUNCATE, &zerr);
    ck_assert_ptr_nonnull(z);
    zip_source_t *src = zip_source_buffer(z, "not used", 8, 0);
    ck_assert_int_ge(zip_file_add(z, "W.npy", src, 0), 0);
    ck_assert_int_eq(zip_close(z), 0);
}
static void make_npz_not_zip(const char *dir)
{
    char p[512];
    path_in(p, sizeof p, dir, "a.npz");
    tn_write_bytes(p, "this is not a zip archive at all", 32);
}
/* A sparse file (no disk blocks) of 10^8 × 3 … rows: a shape whose doubles
 * exceed any machine's memory, refused before a byte of it is read. */
static void make_beyond_memory(const char *dir)
{
    x_with(dir, 1, "{'descr': '<f8', 'fortran_order': False, "
           "'shape': (100000000000, 3), }", 0);
    char p[512];
    path_in(p, sizeof p, dir, "X.npy");
    ck_assert_int_eq(truncate(p, (off_t)128 + (off_t)100000000000 * 24), 0);
}
static void make_missing(const char *dir)
{
    char p[512];
    path_in(p, sizeof p, dir, "X.npy");
    ck_assert_int_eq(unlink(p), 0);
}

typedef struct {
    const char *row;        /* the row of docs/bad-inputs.md            */
    const char *cls;        /* its class                                */
    void (*make)(const char *dir);
    const char *x;          /* the client's "X" (NULL: "X.npy")         */
    const char *file;       /* the file standard error must name        */
    const char *phrase;     /* and what it must say                     */
} bad_case;

static const bad_case CASES[] = {
    {"N1", "truncated data", make_truncated, NULL, "X.npy",
     "truncated: header field 'shape' promises 15 elements"},
    {"N2", "big-endian dtype", make_big_endian, NULL, "X.npy",
     "header field 'descr' is '>f8'"},
    {"N3", "unsupported dtype", make_float16, NULL, "X.npy",
     "header field 'descr' is '<f2'"},
    {"N4", "integer features", make_uint8_features, NULL, "X.npy",
     "header field 'descr' is '|u1': features X are '<f8' or '<f4'"},
    {"N5", "Fortran order", make_fortran, NULL, "X.npy",
     "header field 'fortran_order' is True"},
    {"N6", "shape against the model's d", make_wrong_d, NULL, "X.npy",
     "header field 'shape' has 2 dimensions and 4 columns"},
    {"N7", "three dimensions", make_three_dims, NULL, "X.npy",
     "header field 'shape' has 3 dimensions"},
    {"N8", "trailing bytes (the header lies)", make_trailing, NULL,
     "X.npy", "the header lies: field 'shape' describes 120 bytes"},
    {"N9", "rows of X and y differ", make_short_rows, NULL, "y.npy",
     "X (X.npy) has 5 rows but y (y.npy) has 4 entries"},
    {"N10", "header length beyond the file", make_length_lies, NULL,
     "X.npy", "the header length field says 4000 bytes"},
    {"N11", "a folder", make_folder, NULL, "X.npy",
     "is not a regular file (a folder)"},
    {"N12", "a FIFO", make_fifo, NULL, "X.npy",
     "is not a regular file (a FIFO (named pipe))"},
    {"N13", "NaN in the data", make_nan, NULL, "X.npy",
     "element 7 (row 2, column 1) is nan: the data must be finite"},
    {"N14", "not a .npy file", make_bad_magic, NULL, "X.npy",
     "not a .npy file (the magic"},
    {"N15", "unknown version", make_version4, NULL, "X.npy",
     "format version 4.0"},
    {"N16", "a header field missing", make_missing_shape, NULL, "X.npy",
     "header field 'shape' is missing"},
    {"N17", "an unknown header field", make_unknown_key, NULL, "X.npy",
     "header field 'order' is unknown"},
    {"N18", "integer targets for a regression", make_int_targets, NULL,
     "y.npy", "header field 'descr' is '<i8' (integer labels) but the "
     "model is a regression"},
    {"N19", "archive without the member", make_npz_without_member,
     "a.npz:X", "a.npz:X", "the archive has no member \"X\""},
    {"N20", "archive that is not a zip", make_npz_not_zip, "a.npz:X",
     "a.npz:X", "not a readable zip archive"},
    {"N21", "missing file", make_missing, NULL, "X.npy",
     "cannot open X.npy"},
    {"N22", "data beyond the machine's memory", make_beyond_memory, NULL,
     "X.npy", "header field 'shape' gives 300000000000 elements, 2.24e+03 "
     "GiB as doubles: more than this machine's memory"},
};
enum { N_CASES = sizeof CASES / sizeof CASES[0] };

START_TEST(test_npy_bad_file)
{
    const bad_case *c = &CASES[_i];
    char *dir = tu_tmpdir();
    double X[ROWS * COLS], y[ROWS];
    good_values(X, y);
    char p[512], args[1200];
    path_in(p, sizeof p, dir, "X.npy");
    tn_write_npy(p, "<f8", ROWS, COLS, X, 8);
    path_in(p, sizeof p, dir, "y.npy");
    tn_write_npy(p, "<f8", ROWS, 0, y, 8);
    c->make(dir);
    char spec[1024];
    snprintf(spec, sizeof spec,
             "{\"format\": \"pflref-spec/1\", \"name\": \"bad\", \"model\": "
             "{\"kind\": \"linear\", \"d\": 3, \"loss\": \"squared\"}, "
             "\"problem\": {\"clients\": [{\"X\": \"%s\", \"y\": "
             "\"y.npy\"}]}, \"algorithm\": {\"name\": \"fedavg\", "
             "\"hyperparameters\": {\"eta\": 0.05}}, \"schedule\": "
             "{\"kind\": \"generate\", \"rounds\": 1, \"clients_per_round\": "
             "1, \"local\": {\"steps\": 1, \"batch_size\": 0}}}",
             c->x != NULL ? c->x : "X.npy");
    path_in(p, sizeof p, dir, "s.json");
    ck_assert_int_eq(tu_write(p, spec), 0);
    snprintf(args, sizeof args, "run '%s/s.json' -o '%s/r.json'", dir, dir);
    char *out = NULL, *errout = NULL;
    const int rc = tu_cli(args, &out, &errout);
    ck_assert_msg(rc == 2, "%s (%s): exit %d, want 2; stderr: %s", c->row,
                  c->cls, rc, errout);
    char named[64];
    snprintf(named, sizeof named, "%s", c->file);
    ck_assert_msg(strstr(errout, named) != NULL &&
                      strstr(errout, c->phrase) != NULL,
                  "%s (%s): stderr should name %s and say \"%s\": %s",
                  c->row, c->cls, c->file, c->phrase, errout);
    ck_assert_msg(strstr(errout, "problem.clients[0].") != NULL,
                  "%s: stderr should give the JSON path: %s", c->row, errout);
    ck_assert_msg(out[0] == '\0', "%s: stdout not empty: %s", c->row, out);
    path_in(p, sizeof p, dir, "r.json");
    ck_assert_msg(!tu_exists(p), "%s: a result was left behind", c->row);
    free(out);
    free(errout);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* Every row of CASES is in docs/bad-inputs.md with its class and test. */
START_TEST(test_npy_catalogue)
{
    char *path = tu_repo_path("docs/bad-inputs.md");
    char *doc = tu_read(path);
    ck_assert_ptr_nonnull(doc);
    for (size_t i = 0; i < N_CASES; i++) {
        char row[160];
        snprintf(row, sizeof row, "| %s | %s |", CASES[i].row, CASES[i].cls);
        ck_assert_msg(strstr(doc, row) != NULL,
                      "docs/bad-inputs.md lacks the row \"%s\"", row);
    }
    char next[32];
    snprintf(next, sizeof next, "| N%d |", N_CASES + 1);
    ck_assert_msg(strstr(doc, next) == NULL,
                  "docs/bad-inputs.md has a row %s that no test runs", next);
    free(doc);
    free(path);
}
END_TEST

void npy_bad_cases(Suite *s)
{
    TCase *tc = tcase_create("bad");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_npy_bad_file, 0, N_CASES);
    tcase_add_test(tc, test_npy_catalogue);
    suite_add_tcase(s, tc);
}
