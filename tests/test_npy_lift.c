/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_npy_lift.c: the lean JSON reading of the clients' arrays
 * (ref/io/json_numeric.c): the numbers lifted from the text are the very
 * doubles jansson reads from the same text, and errors keep jansson's
 * line and column.
 *
 * The oracle is jansson itself (json_loads on the untouched text, then
 * json_number_value per entry), which is what the reader used before
 * lifting: every lifted double must have the same bits.
 */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pflref.h"
#include "io/json.h"
#include "testutil.h"
#include "test_npy.h"

/* A random number literal of JSON's grammar from the xorshift state *s:
 * integers (with -0 and 19-digit ones), decimals of 1..20 digits, with and
 * without exponents, denormal and huge magnitudes. */
static void random_literal(uint64_t *s, char *out, size_t size)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    const int kind = (int)(x % 7);
    const int neg = (int)((x >> 3) & 1);
    const unsigned long long m = (x >> 8) % 10000000000000000000ULL;
    const int digits = 1 + (int)((x >> 40) % 20);
    char mant[32];
    snprintf(mant, sizeof mant, "%llu", m);
    mant[digits < (int)strlen(mant) ? digits : (int)strlen(mant)] = '\0';
    switch (kind) {
    case 0: /* integers, -0 among them */
        snprintf(out, size, "%s%s", neg ? "-" : "", (x & 0x30) ? mant : "0");
        break;
    case 1: /* 0.digits */
        snprintf(out, size, "%s0.%s", neg ? "-" : "", mant);
        break;
    case 2: { /* digits.digits, the point anywhere */
        const size_t n = strlen(mant), at = 1 + (size_t)((x >> 50) % n);
        snprintf(out, size, "%s%.*s.%s%s", neg ? "-" : "", (int)at, mant,
                 at < n ? mant + at : "", at < n ? "" : "5");
        break;
    }
    case 3: /* exponents */
        snprintf(out, size, "%s%c.%se%+d", neg ? "-" : "",
                 '1' + (int)(m % 9), mant, (int)((x >> 45) % 600) - 300);
        break;
    case 4: /* pixels /255, as MNIST exports write them */
        snprintf(out, size, "%.17g", (double)(m % 256) / 255.0);
        break;
    case 5: /* 17 significant digits of a random double */
        snprintf(out, size, "%.17g",
                 (neg ? -1.0 : 1.0) * (double)m * 1e-19 * pow(10.0, (double)((x >> 44) % 40) - 20.0));
        break;
    default: /* zeros as exporters write them */
        snprintf(out, size, "%s", neg ? "-0.0" : "0.0");
    }
}

/* 4000 random literals in 40 rows of X and in y: the lifted doubles are
 * jansson's, bit for bit. */
START_TEST(test_lift_same_doubles_as_jansson)
{
    enum { ROWS = 40, COLS = 100 };
    const size_t cap = (size_t)ROWS * COLS * 48 + 4096;
    char *text = malloc(cap);
    ck_assert_ptr_nonnull(text);
    uint64_t s = 0x9E3779B97F4A7C15ULL + (uint64_t)_i;
    strcpy(text, "{\"X\": [");
    for (int i = 0; i < ROWS; i++) {
        strcat(text, i ? ", [" : "[");
        for (int j = 0; j < COLS; j++) {
            char lit[64];
            random_literal(&s, lit, sizeof lit);
            if (j)
                strcat(text, ",");
            strcat(text, lit);
        }
        strcat(text, "]");
    }
    strcat(text, "], \"y\": [");
    for (int i = 0; i < COLS; i++) {
        char lit[64];
        random_literal(&s, lit, sizeof lit);
        strcat(text, i ? ", " : "");
        strcat(text, lit);
    }
    strcat(text, "]}");
    const size_t len = strlen(text);
    /* the oracle: jansson on the untouched text */
    json_error_t je;
    json_t *root = json_loadb(text, len, 0, &je);
    ck_assert_msg(root != NULL, "jansson: %s", je.text);
    pflref_json_numerics t = {.a = NULL};
    size_t llen = len;
    char *copy = malloc(len);
    memcpy(copy, text, len);
    ck_assert_uint_eq(pflref_json_lift(copy, &llen, &t), 2);
    ck_assert_uint_lt(llen, 64);
    json_t *lroot;
    pflref_error err;
    ck_assert_int_eq(pflref_json_parse_lifted(copy, llen, text, len, "",
                                              &lroot, &err), PFLREF_OK);
    const pflref_json_numeric *X =
        pflref_json_numeric_of(json_object_get(lroot, "X"), &t);
    const pflref_json_numeric *y =
        pflref_json_numeric_of(json_object_get(lroot, "y"), &t);
    ck_assert_ptr_nonnull(X);
    ck_assert_ptr_nonnull(y);
    ck_assert_uint_eq(X->rows, ROWS);
    for (size_t i = 0; i < ROWS; i++) {
        ck_assert_uint_eq(X->row_len[i], COLS);
        for (size_t j = 0; j < COLS; j++) {
            const double want = json_number_value(
                json_array_get(json_array_get(json_object_get(root, "X"), i),
                               j));
            const double got = X->v[i * COLS + j];
            ck_assert_msg(memcmp(&want, &got, sizeof got) == 0,
                          "X[%zu][%zu]: lifted %.17g, jansson %.17g", i, j,
                          got, want);
        }
    }
    for (size_t j = 0; j < COLS; j++) {
        const double want =
            json_number_value(json_array_get(json_object_get(root, "y"), j));
        ck_assert_msg(memcmp(&want, &y->v[j], sizeof want) == 0,
                      "y[%zu]: lifted %.17g, jansson %.17g", j, y->v[j],
                      want);
    }
    json_decref(root);
    json_decref(lroot);
    pflref_json_numerics_free(&t);
    free(copy);
    free(text);
}
END_TEST

/* What is not lifted: other keys, strings, an overflow, an integer beyond
 * int64, an underflow, a malformed number, an empty row, a flat X, a
 * nested y; and nothing at all when the text holds \u0001. */
START_TEST(test_lift_refuses)
{
    static const char *const texts[] = {
        "{\"w\": [1.5, 2.5]}",
        "{\"X\": [[1.5, \"2\"]]}",
        "{\"X\": [[1.5, 1e999]]}",
        "{\"y\": [1, 99999999999999999999]}",
        "{\"y\": [1.5, 1e-400]}",
        "{\"y\": [1.5, 01]}",
        "{\"y\": [1.5, 1.]}",
        "{\"X\": [[1.5], []]}",
        "{\"X\": [1.5, 2.5, 3.5]}",
        "{\"y\": [[1.5, 2.5]]}",
        "{\"X\": [[1.5, 2.5]], \"s\": \"\\u0001\"}",
    };
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
        char buf[128];
        size_t len = strlen(texts[k]);
        memcpy(buf, texts[k], len);
        pflref_json_numerics t = {.a = NULL};
        ck_assert_msg(pflref_json_lift(buf, &len, &t) == 0,
                      "lifted from %s", texts[k]);
        ck_assert_uint_eq(len, strlen(texts[k]));
        ck_assert_msg(memcmp(buf, texts[k], len) == 0, "text changed: %s",
                      texts[k]);
        pflref_json_numerics_free(&t);
    }
}
END_TEST

/* A syntax error after a lifted array on the same line, and one on a
 * later line: the spec reader reports jansson's own line and column for
 * the original text. */
START_TEST(test_lift_error_positions)
{
    static const char *const texts[] = {
        "{\"format\": \"pflref-spec/1\", \"problem\": {\"clients\": [{\"X\": "
        "[[1.5, 2.5], [3.5, 4.5]], \"y\": [0.5, 1.5]} oops]}}",
        "{\"format\": \"pflref-spec/1\",\n \"problem\": {\"clients\": [{\"X\":"
        " [[1.5, 2.5],\n [3.5, 4.5]], \"y\": [0.5,\n 1.5]}]},\n \"x\": ]}",
    };
    for (size_t k = 0; k < 2; k++) {
        json_error_t je;
        ck_assert_ptr_null(json_loads(texts[k], JSON_REJECT_DUPLICATES, &je));
        char want[256];
        snprintf(want, sizeof want, "line %d, column %d: %s", je.line,
                 je.column, je.text);
        pflref_spec *spec = NULL;
        pflref_error err;
        ck_assert_int_eq(pflref_spec_parse(texts[k], strlen(texts[k]), NULL,
                                           &spec, &err), PFLREF_EINVAL);
        ck_assert_msg(strstr(err.message, want) != NULL,
                      "message \"%s\" should hold \"%s\"", err.message, want);
    }
}
END_TEST

/* A ragged lifted X is named as before: the row and the count. */
START_TEST(test_lift_ragged_row)
{
    const char *spec =
        "{\"format\": \"pflref-spec/1\", \"name\": \"r\", \"model\": "
        "{\"kind\": \"linear\", \"d\": 2, \"loss\": \"squared\"}, "
        "\"problem\": {\"clients\": [{\"X\": [[1.5, 2.5], [3.5, 4.5, 5.5]],"
        " \"y\": [0.5, 1.5]}]}, \"algorithm\": {\"name\": \"fedavg\", "
        "\"hyperparameters\": {\"eta\": 0.1}}, \"schedule\": {\"kind\": "
        "\"generate\", \"rounds\": 1, \"clients_per_round\": 1, \"local\": "
        "{\"steps\": 1, \"batch_size\": 0}}}";
    pflref_spec *s = NULL;
    pflref_error err;
    ck_assert_int_eq(pflref_spec_parse(spec, strlen(spec), NULL, &s, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "problem.clients[0].X[1]");
    ck_assert_str_eq(err.message, "expected 2 numbers, found 3");
}
END_TEST

void npy_lift_cases(Suite *s)
{
    TCase *tc = tcase_create("lift");
    tcase_add_loop_test(tc, test_lift_same_doubles_as_jansson, 0, 8);
    tcase_add_test(tc, test_lift_refuses);
    tcase_add_test(tc, test_lift_error_positions);
    tcase_add_test(tc, test_lift_ragged_row);
    suite_add_tcase(s, tc);
}
