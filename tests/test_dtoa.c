/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_dtoa.c: the shortest round-trip text of a double
 * (ref/core/dtoa.c, pflref/dtoa.h; Ryū, Adams, PLDI 2018).
 *
 *   golden      every case of golden/dtoa/cases.json prints exactly as
 *               Python's repr (golden/dtoa/make_cases.py: zeros, subnormals,
 *               the normal bounds, powers of two and ten, the notation
 *               switch, exact ties, near half-way points, 17-digit and
 *               random doubles)
 *   properties  on PROPERTY_DRAWS random bit patterns (a fixed seed): the
 *               text reads back (strtod) to the same bits, and, on every
 *               SHORTEST_EVERY-th, no text with fewer significant digits
 *               does (both candidates of one digit fewer on either side of
 *               x are tried, from glibc's correctly rounded printf)
 *   specials    the texts the header promises for NaN and the infinities
 *   tables      ref/core/dtoa_tables.h is what tools/gen_dtoa_tables.py
 *               writes today (the generator also re-proves the tables)
 */
#include <check.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pflref/dtoa.h"
#include "suites.h"
#include "testutil.h"

/* Random bit patterns in the property test, and how often one of them is
 * also checked to be the shortest (glibc's printf, the independent check,
 * costs ten times pflref_dtoa and strtod): a million draws and a quarter
 * of a million shortness checks take about a second on the release build. */
#define PROPERTY_DRAWS 1000000
#define SHORTEST_EVERY 4
/* Fewer cases than this means golden/dtoa/cases.json was cut short. */
#define GOLDEN_MIN_CASES 8000

static uint64_t bits_of(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static double double_of(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

/* splitmix64 (Steele, Lea and Flood, OOPSLA 2014): the test's own stream. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* ---- golden: Python's repr -------------------------------------------- */

/* evidence: golden/dtoa/cases.json, written by CPython's repr */
START_TEST(test_golden_cases)
{
    char *path = tu_repo_path("golden/dtoa/cases.json");
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, NULL);
    ck_assert_msg(root != NULL, "cannot read %s", path);
    ck_assert_str_eq(json_string_value(json_object_get(root, "format")),
                     "pflref-dtoa-cases/1");
    const json_t *groups = json_object_get(root, "groups");
    size_t total = 0, failed = 0;
    for (size_t g = 0; g < json_array_size(groups); g++) {
        const json_t *group = json_array_get(groups, g);
        const char *name = json_string_value(json_object_get(group, "name"));
        const json_t *cases = json_object_get(group, "cases");
        ck_assert_msg(name != NULL && json_array_size(cases) > 0,
                      "group %zu of %s has no name or no cases", g, path);
        for (size_t i = 0; i < json_array_size(cases); i++, total++) {
            const json_t *c = json_array_get(cases, i);
            const char *hex = json_string_value(json_array_get(c, 0));
            const char *want = json_string_value(json_array_get(c, 1));
            ck_assert_msg(hex != NULL && want != NULL && strlen(hex) == 16,
                          "%s, case %zu is malformed", name, i);
            const double x = double_of(strtoull(hex, NULL, 16));
            char got[PFLREF_DTOA_MAX];
            const size_t len = pflref_dtoa(x, got);
            if (strcmp(got, want) != 0 || len != strlen(want)) {
                if (failed++ < 10)
                    fprintf(stderr, "dtoa: %s, bits %s: got \"%s\" (length %zu), "
                            "Python's repr \"%s\"\n", name, hex, got, len, want);
            }
        }
    }
    ck_assert_msg(failed == 0, "%zu of %zu cases differ from Python's repr "
                  "(the first ten above)", failed, total);
    ck_assert_msg(total >= GOLDEN_MIN_CASES &&
                      (json_int_t)total == json_integer_value(json_object_get(root, "count")),
                  "%s has %zu cases, not its count (at least %d)", path, total,
                  GOLDEN_MIN_CASES);
    json_decref(root);
    free(path);
}
END_TEST

/* ---- properties: reads back, and nothing shorter does ------------------ */

/* Significant digits of a pflref_dtoa text: the digits before any 'e',
 * without leading or trailing zeros ("100.0" → 1, "0.0012" → 2). */
static int significant_digits(const char *text)
{
    const char *first = NULL, *last = NULL;
    for (const char *p = text; *p != '\0' && *p != 'e'; p++)
        if (*p >= '1' && *p <= '9') {
            if (first == NULL)
                first = p;
            last = p;
        }
    int n = 0;
    for (const char *p = first; p != NULL && p <= last; p++)
        n += *p >= '0' && *p <= '9';
    return n;
}

/* 1 when some decimal of n − 1 significant digits (n >= 2) reads back to
 * ax = |x| > 0.  Every shorter decimal is also one of n − 1 digits, and the
 * set of decimals that read back to ax is an interval around it, so only
 * the nearest such decimal below ax and the nearest above can: glibc's
 * "%.*e" gives the nearest of the two (R = M·10^s), and the other is M ± 1
 * at the same scale, or 99…9 at the next scale down when R is a power of
 * ten above ax. */
static int shorter_reads_back(double ax, int n)
{
    char r[64], t[64];
    snprintf(r, sizeof r, "%.*e", n - 2, ax);
    const double y = strtod(r, NULL);
    if (bits_of(y) == bits_of(ax))
        return 1;
    uint64_t M = 0, pow = 1;
    const char *p = r;
    for (; *p != 'e'; p++)
        if (*p != '.')
            M = 10 * M + (uint64_t)(*p - '0');
    for (int k = 0; k < n - 2; k++)
        pow *= 10;
    int scale = atoi(p + 1) - (n - 2);   /* R = M·10^scale, M has n − 1 digits */
    uint64_t other;
    if (y < ax)
        other = M + 1;
    else if (M == pow) {
        other = 10 * pow - 1;
        scale--;
    } else
        other = M - 1;
    snprintf(t, sizeof t, "%" PRIu64 "e%d", other, scale);
    return bits_of(strtod(t, NULL)) == bits_of(ax);
}

/* The first property a text of bits b breaks, or NULL (the loop below
 * asserts once at the end: a Check assertion per draw would cost more than
 * the draw). */
static const char *broken_property(uint64_t b, int check_shortest,
                                   char text[PFLREF_DTOA_MAX])
{
    const double x = double_of(b);
    const size_t len = pflref_dtoa(x, text);
    if (len != strlen(text) || len >= PFLREF_DTOA_MAX)
        return "its length is not the text's, or does not fit";
    char *end;
    const double back = strtod(text, &end);
    if (*end != '\0' || bits_of(back) != b)
        return "it does not read back to the same bits";
    const int n = significant_digits(text);
    if (n < 1 || n > 17)
        return "it has no digit, or more than 17";
    if (check_shortest && n > 1 && x != 0 && shorter_reads_back(fabs(x), n))
        return "it is not the shortest: one digit fewer reads back too";
    return NULL;
}

START_TEST(test_round_trip_and_shortest)
{
    uint64_t state = UINT64_C(20180611);
    size_t tested = 0, failed = 0;
    for (size_t k = 0; k < PROPERTY_DRAWS; k++) {
        const uint64_t b = splitmix64(&state);
        if (!isfinite(double_of(b)))
            continue;
        char text[PFLREF_DTOA_MAX];
        const char *why = broken_property(b, k % SHORTEST_EVERY == 0, text);
        if (why != NULL && failed++ < 10)
            fprintf(stderr, "dtoa: bits %016" PRIx64 " print as \"%s\": %s\n",
                    b, text, why);
        tested++;
    }
    ck_assert_msg(failed == 0, "%zu of %zu random doubles break a property "
                  "(the first ten above)", failed, tested);
    ck_assert_uint_gt(tested, PROPERTY_DRAWS / 2);
}
END_TEST

/* The checker itself: it finds the shorter text where there is one.  With
 * 17 digits of 0.1 (0.10000000000000001), a 16-digit text reads back; 2.0
 * printed as "2.0000000000000000" has 1-digit company; 5e-324 as
 * "4.9406564584124654e-324" reads back with 1 digit. */
START_TEST(test_shortest_checker_bites)
{
    ck_assert(shorter_reads_back(0.1, 17));
    ck_assert(shorter_reads_back(2.0, 17));
    ck_assert(shorter_reads_back(5e-324, 17));
    ck_assert(shorter_reads_back(5e-324, 2));
    /* and 0.3's neighbour below, 0.29999999999999993, needs its 17 */
    ck_assert(!shorter_reads_back(nextafter(0.3, 0.0), 17));
    ck_assert_int_eq(significant_digits("100.0"), 1);
    ck_assert_int_eq(significant_digits("-0.00120"), 2);
    ck_assert_int_eq(significant_digits("1.0000000000000002e+16"), 17);
}
END_TEST

/* ---- specials ---------------------------------------------------------- */

/* pflref/dtoa.h: NaN and the infinities (a diverged run's trace) get
 * Python's texts, never a number; no output buffer, no text. */
START_TEST(test_specials)
{
    char t[PFLREF_DTOA_MAX];
    ck_assert_uint_eq(pflref_dtoa(NAN, t), 3);
    ck_assert_str_eq(t, "nan");
    ck_assert_uint_eq(pflref_dtoa(-NAN, t), 3);
    ck_assert_str_eq(t, "nan");
    ck_assert_uint_eq(pflref_dtoa(INFINITY, t), 3);
    ck_assert_str_eq(t, "inf");
    ck_assert_uint_eq(pflref_dtoa(-INFINITY, t), 4);
    ck_assert_str_eq(t, "-inf");
    ck_assert_uint_eq(pflref_dtoa(2.385, NULL), 0);
    /* the longest finite text (24 characters) fits */
    ck_assert_uint_eq(pflref_dtoa(-2.2250738585072014e-308, t), 24);
    ck_assert_str_eq(t, "-2.2250738585072014e-308");
}
END_TEST

/* ---- tables: the committed header is the generator's ------------------- */

START_TEST(test_tables_match_generator)
{
    char *gen = tu_repo_path("tools/gen_dtoa_tables.py");
    char *header = tu_repo_path("ref/core/dtoa_tables.h");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' --stdout", gen);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t cap = 1 << 20, n = 0, k;
    char *got = malloc(cap);
    ck_assert_ptr_nonnull(got);
    while ((k = fread(got + n, 1, cap - 1 - n, p)) > 0)
        n += k;
    got[n] = '\0';
    ck_assert_msg(pclose(p) == 0, "%s failed (its checks print why)", gen);
    char *want = tu_read(header);
    ck_assert_ptr_nonnull(want);
    ck_assert_msg(strcmp(got, want) == 0,
                  "%s differs from what %s writes: rerun the generator",
                  header, gen);
    free(want);
    free(got);
    free(header);
    free(gen);
}
END_TEST

Suite *dtoa_suite(void)
{
    Suite *s = suite_create("dtoa");
    TCase *tc = tcase_create("dtoa");
    tcase_add_test(tc, test_golden_cases);
    tcase_add_test(tc, test_round_trip_and_shortest);
    tcase_add_test(tc, test_shortest_checker_bites);
    tcase_add_test(tc, test_specials);
    tcase_add_test(tc, test_tables_match_generator);
    /* the property test: ~1 s on the release build, more under ASan */
    tcase_set_timeout(tc, 30);
    suite_add_tcase(s, tc);
    return s;
}
