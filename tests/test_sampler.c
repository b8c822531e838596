/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_sampler.c: the client samplers and the seeded random streams
 * (ref/sampling/sampler.c).
 *
 * Expected values come from outside the code under test:
 *   - the sampling notes' recorded examples (spec notes §3.1, §3.2:
 *     gsl_ran_choose and gsl_ran_shuffle on mt19937 seed 42, numpy
 *     RandomState(42).choice(10, 3, replace=False) = [8, 1, 5]);
 *   - golden/sampling/numpy_choice.txt, recorded by
 *     golden/sampling/record_numpy_choice.py from numpy 1.24.2 (numpy's
 *     choice and permutation, and GSL's formulas replayed on numpy's raw
 *     mt19937 stream);
 *   - properties derived by hand (distinct ids in range, ascending,
 *     inclusion frequency m/N).
 * The golden file is found through PFLREF_ROOT (set by the Makefile; the
 * current directory otherwise).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <check.h>
#include "pflref/sampler.h"
#include "suites.h"

#define GOLDEN "golden/sampling/numpy_choice.txt"

/* The largest population in the golden file (262145) rounded up. */
#define GOLDEN_N_MAX 270000

/* ---------------------------------------------------------------------
 * The golden file: "KIND H1 H2 … : V1 V2 …" lines, '#' comments.
 * ------------------------------------------------------------------- */

typedef struct {
    char kind[32];
    char head[3][32];   /* the header tokens after KIND              */
    size_t nhead;
    char *values;       /* the text after the colon (inside `line`)  */
} golden_record;

static FILE *golden_open(char *path, size_t size)
{
    const char *root = getenv("PFLREF_ROOT");
    snprintf(path, size, "%s/%s", root != NULL ? root : ".", GOLDEN);
    return fopen(path, "r");
}

/* Split one line into a record; returns 0 for comments and blank lines. */
static int golden_parse(char *line, golden_record *rec)
{
    if (line[0] == '#' || line[0] == '\n' || line[0] == '\0')
        return 0;
    char *colon = strchr(line, ':');
    ck_assert_msg(colon != NULL, "golden line without ':': %.60s", line);
    *colon = '\0';
    rec->values = colon + 1;
    rec->nhead = 0;
    char *save = NULL;
    char *tok = strtok_r(line, " \t", &save);
    ck_assert_msg(tok != NULL, "golden line without a kind");
    snprintf(rec->kind, sizeof rec->kind, "%s", tok);
    while ((tok = strtok_r(NULL, " \t", &save)) != NULL) {
        ck_assert_msg(rec->nhead < 3, "golden %s line has too many fields",
                      rec->kind);
        snprintf(rec->head[rec->nhead++], sizeof rec->head[0], "%s", tok);
    }
    return 1;
}

static unsigned long head_ul(const golden_record *rec, size_t k)
{
    ck_assert_msg(k < rec->nhead, "golden %s line lacks field %zu",
                  rec->kind, k + 1);
    return strtoul(rec->head[k], NULL, 10);
}

/* Parse exactly `count` integers from rec->values into out. */
static void values_size(const golden_record *rec, size_t *out, size_t count)
{
    char *p = rec->values;
    for (size_t k = 0; k < count; k++) {
        char *end;
        unsigned long v = strtoul(p, &end, 10);
        ck_assert_msg(end != p, "golden %s line has %zu values, expected "
                      "%zu", rec->kind, k, count);
        out[k] = (size_t)v;
        p = end;
    }
    while (*p == ' ' || *p == '\n')
        p++;
    ck_assert_msg(*p == '\0', "golden %s line has more than %zu values",
                  rec->kind, count);
}

static void values_double(const golden_record *rec, double *out,
                          size_t count)
{
    char *p = rec->values;
    for (size_t k = 0; k < count; k++) {
        char *end;
        out[k] = strtod(p, &end);
        ck_assert_msg(end != p, "golden %s line has %zu values, expected "
                      "%zu", rec->kind, k, count);
        p = end;
    }
}

/* Call fn on every record of the given kind; returns how many there were. */
typedef void (*record_fn)(const golden_record *rec, void *ctx);

static size_t golden_each(const char *kind, record_fn fn, void *ctx)
{
    char path[1024];
    FILE *f = golden_open(path, sizeof path);
    ck_assert_msg(f != NULL, "cannot open %s (set PFLREF_ROOT to the "
                  "repository)", path);
    char *line = NULL;
    size_t cap = 0;
    size_t count = 0;
    golden_record rec;
    while (getline(&line, &cap, f) != -1) {
        if (!golden_parse(line, &rec) || strcmp(rec.kind, kind) != 0)
            continue;
        fn(&rec, ctx);
        count++;
    }
    free(line);
    fclose(f);
    return count;
}

static void sort_sizes(size_t *x, size_t m)
{
    for (size_t i = 1; i < m; i++)
        for (size_t k = i; k > 0 && x[k - 1] > x[k]; k--) {
            size_t t = x[k];
            x[k] = x[k - 1];
            x[k - 1] = t;
        }
}

/* Buffers shared by the golden checks (one sampler per kind). */
typedef struct {
    pflref_sampler *s;
    size_t expect[GOLDEN_N_MAX];
    size_t sorted[GOLDEN_N_MAX];
    size_t chosen[GOLDEN_N_MAX];
    size_t drawn[GOLDEN_N_MAX];
} golden_ctx;

static golden_ctx *golden_ctx_new(pflref_sampler_kind kind)
{
    golden_ctx *c = malloc(sizeof *c);
    ck_assert(c != NULL);
    c->s = pflref_sampler_alloc(kind, GOLDEN_N_MAX);
    ck_assert_msg(c->s != NULL, "pflref_sampler_alloc(%s, %d) failed",
                  pflref_sampler_kind_name(kind), GOLDEN_N_MAX);
    return c;
}

static void golden_ctx_free(golden_ctx *c)
{
    pflref_sampler_free(c->s);
    free(c);
}

/* Draw (seed, N, m) and compare drawn with the record's values exactly,
 * and chosen with the values sorted. */
static void check_draw(golden_ctx *c, const char *kind, unsigned long seed,
                       size_t N, size_t m, const golden_record *rec)
{
    ck_assert_msg(N <= GOLDEN_N_MAX && m <= N, "golden %s %lu %zu %zu is "
                  "outside the test's buffers", kind, seed, N, m);
    values_size(rec, c->expect, m);
    memcpy(c->sorted, c->expect, m * sizeof *c->sorted);
    sort_sizes(c->sorted, m);
    pflref_error err;
    pflref_status st =
        pflref_sampler_choose(c->s, seed, N, m, c->chosen, c->drawn, &err);
    ck_assert_msg(st == PFLREF_OK, "%s seed %lu N %zu m %zu failed: %s",
                  kind, seed, N, m, err.message);
    for (size_t k = 0; k < m; k++) {
        ck_assert_msg(c->drawn[k] == c->expect[k],
                      "%s seed %lu N %zu m %zu: drawn[%zu] = %zu, recorded "
                      "%zu", kind, seed, N, m, k, c->drawn[k], c->expect[k]);
        ck_assert_msg(c->chosen[k] == c->sorted[k],
                      "%s seed %lu N %zu m %zu: chosen[%zu] = %zu, the "
                      "recorded sample sorted has %zu", kind, seed, N, m, k,
                      c->chosen[k], c->sorted[k]);
    }
}

static void check_choice_record(const golden_record *rec, void *ctx)
{
    check_draw(ctx, rec->kind, head_ul(rec, 0), head_ul(rec, 1),
               head_ul(rec, 2), rec);
}

static void check_permutation_record(const golden_record *rec, void *ctx)
{
    /* permutation(N) = choice(N, N, replace=False). */
    check_draw(ctx, rec->kind, head_ul(rec, 0), head_ul(rec, 1),
               head_ul(rec, 1), rec);
}

/* permutation_tail SEED N K: the last K entries of permutation(N). */
static void check_permutation_tail_record(const golden_record *rec,
                                          void *ctx)
{
    golden_ctx *c = ctx;
    const unsigned long seed = head_ul(rec, 0);
    const size_t N = head_ul(rec, 1), K = head_ul(rec, 2);
    ck_assert_msg(N <= GOLDEN_N_MAX && K <= N, "permutation_tail %lu %zu "
                  "%zu is outside the test's buffers", seed, N, K);
    values_size(rec, c->expect, K);
    ck_assert(pflref_sampler_choose(c->s, seed, N, N, c->chosen, c->drawn,
                                    NULL) == PFLREF_OK);
    for (size_t k = 0; k < K; k++)
        ck_assert_msg(c->drawn[N - K + k] == c->expect[k],
                      "permutation seed %lu N %zu: entry %zu = %zu, "
                      "recorded %zu", seed, N, N - K + k,
                      c->drawn[N - K + k], c->expect[k]);
}

/* ---------------------------------------------------------------------
 * Names
 * ------------------------------------------------------------------- */

START_TEST(test_kind_names)
{
    ck_assert_str_eq(pflref_sampler_kind_name(PFLREF_SAMPLER_GSL), "gsl");
    ck_assert_str_eq(pflref_sampler_kind_name(PFLREF_SAMPLER_NUMPY_LEGACY),
                     "numpy_legacy");
    ck_assert_str_eq(pflref_sampler_kind_name((pflref_sampler_kind)7),
                     "unknown");
}
END_TEST

/* ---------------------------------------------------------------------
 * The gsl sampler
 * ------------------------------------------------------------------- */

/* Any sampler: chosen holds m distinct ids < N, ascending, and drawn is a
 * permutation of chosen (for gsl: equal to it). */
static void check_sample_shape(pflref_sampler_kind kind, unsigned long seed,
                               size_t N, size_t m, const size_t *chosen,
                               const size_t *drawn)
{
    const char *name = pflref_sampler_kind_name(kind);
    for (size_t k = 0; k < m; k++) {
        ck_assert_msg(chosen[k] < N, "%s seed %lu N %zu m %zu: chosen[%zu] "
                      "= %zu is out of range", name, seed, N, m, k,
                      chosen[k]);
        ck_assert_msg(k == 0 || chosen[k - 1] < chosen[k],
                      "%s seed %lu N %zu m %zu: chosen is not strictly "
                      "ascending at %zu", name, seed, N, m, k);
        size_t hits = 0;
        for (size_t q = 0; q < m; q++)
            hits += drawn[q] == chosen[k];
        ck_assert_msg(hits == 1, "%s seed %lu N %zu m %zu: chosen[%zu] = "
                      "%zu appears %zu times in drawn", name, seed, N, m, k,
                      chosen[k], hits);
        if (kind == PFLREF_SAMPLER_GSL)
            ck_assert_msg(drawn[k] == chosen[k], "gsl: drawn differs from "
                          "chosen at %zu (gsl output is ascending)", k);
    }
}

static void check_shape_grid(pflref_sampler_kind kind)
{
    static const size_t Ns[] = {1, 2, 3, 10, 17, 64, 100, 257};
    size_t chosen[257], drawn[257];
    pflref_sampler *s = pflref_sampler_alloc(kind, 257);
    ck_assert(s != NULL);
    for (size_t a = 0; a < sizeof Ns / sizeof Ns[0]; a++) {
        const size_t N = Ns[a];
        const size_t ms[] = {1, 2, N / 3, N / 2, N - 1, N};
        for (size_t b = 0; b < sizeof ms / sizeof ms[0]; b++) {
            const size_t m = ms[b];
            if (m == 0 || m > N)
                continue;
            for (unsigned long seed = 1; seed <= 30; seed++) {
                pflref_status st = pflref_sampler_choose(s, seed, N, m,
                                                         chosen, drawn, NULL);
                ck_assert_msg(st == PFLREF_OK, "seed %lu N %zu m %zu failed",
                              seed, N, m);
                check_sample_shape(kind, seed, N, m, chosen, drawn);
            }
        }
    }
    pflref_sampler_free(s);
}

START_TEST(test_gsl_distinct_in_range_ascending)
{
    /* req: sampling.choose */
    check_shape_grid(PFLREF_SAMPLER_GSL);
}
END_TEST

/* Spec notes §3.1 [script]: mt19937 seed 42, n = 10:
 * k = 1 → [8]; k = 3 → [3 7 8]; k = 5 → [0 3 6 7 8]. */
START_TEST(test_gsl_notes_examples)
{
    /* req: sampling.choose */
    static const size_t k1[] = {8}, k3[] = {3, 7, 8}, k5[] = {0, 3, 6, 7, 8};
    static const size_t *const expect[] = {k1, k3, k5};
    static const size_t ms[] = {1, 3, 5};
    size_t chosen[10], drawn[10];
    pflref_sampler *s = pflref_sampler_alloc(PFLREF_SAMPLER_GSL, 10);
    ck_assert(s != NULL);
    for (size_t c = 0; c < 3; c++) {
        ck_assert(pflref_sampler_choose(s, 42, 10, ms[c], chosen, drawn,
                                        NULL) == PFLREF_OK);
        for (size_t k = 0; k < ms[c]; k++) {
            ck_assert_msg(chosen[k] == expect[c][k], "gsl seed 42 N 10 m "
                          "%zu: chosen[%zu] = %zu, the notes record %zu",
                          ms[c], k, chosen[k], expect[c][k]);
            ck_assert_msg(drawn[k] == expect[c][k], "gsl seed 42 N 10 m "
                          "%zu: drawn[%zu] = %zu, the notes record %zu",
                          ms[c], k, drawn[k], expect[c][k]);
        }
    }
    pflref_sampler_free(s);
}
END_TEST

START_TEST(test_gsl_matches_recorded)
{
    /* req: sampling.choose */
    golden_ctx *c = golden_ctx_new(PFLREF_SAMPLER_GSL);
    size_t count = golden_each("gsl_choose", check_choice_record, c);
    golden_ctx_free(c);
    ck_assert_msg(count >= 50, "only %zu gsl_choose records in %s", count,
                  GOLDEN);
}
END_TEST

/* m = N: every client, ascending, for any seed. */
START_TEST(test_gsl_all_clients)
{
    size_t chosen[33], drawn[33];
    pflref_sampler *s = pflref_sampler_alloc(PFLREF_SAMPLER_GSL, 33);
    ck_assert(s != NULL);
    for (size_t N = 1; N <= 33; N += 8)
        for (unsigned long seed = 1; seed < 4; seed++) {
            ck_assert(pflref_sampler_choose(s, seed, N, N, chosen, drawn,
                                            NULL) == PFLREF_OK);
            for (size_t k = 0; k < N; k++)
                ck_assert_msg(chosen[k] == k && drawn[k] == k,
                              "gsl m = N = %zu: entry %zu is %zu/%zu, not "
                              "%zu", N, k, chosen[k], drawn[k], k);
        }
    pflref_sampler_free(s);
}
END_TEST

/* GSL seeds mt19937 with 4357 when given 0 (documented alias). */
START_TEST(test_gsl_seed_zero_is_4357)
{
    size_t a[4], b[4];
    pflref_sampler *s = pflref_sampler_alloc(PFLREF_SAMPLER_GSL, 50);
    ck_assert(s != NULL);
    ck_assert(pflref_sampler_choose(s, 0, 50, 4, a, NULL, NULL) ==
              PFLREF_OK);
    ck_assert(pflref_sampler_choose(s, 4357, 50, 4, b, NULL, NULL) ==
              PFLREF_OK);
    for (size_t k = 0; k < 4; k++)
        ck_assert_msg(a[k] == b[k], "gsl: seed 0 and seed 4357 differ at "
                      "%zu (%zu vs %zu)", k, a[k], b[k]);
    pflref_sampler_free(s);
}
END_TEST

/* ---------------------------------------------------------------------
 * The numpy_legacy sampler
 * ------------------------------------------------------------------- */

/* Spec notes §3.2 [script]: RandomState(42).choice(10, 3, replace=False)
 * = [8, 1, 5]. */
START_TEST(test_numpy_notes_example)
{
    /* req: sampling.numpy */
    static const size_t expect_drawn[] = {8, 1, 5};
    static const size_t expect_chosen[] = {1, 5, 8};
    size_t chosen[3], drawn[3];
    pflref_sampler *s = pflref_sampler_alloc(PFLREF_SAMPLER_NUMPY_LEGACY,
                                             10);
    ck_assert(s != NULL);
    ck_assert(pflref_sampler_choose(s, 42, 10, 3, chosen, drawn, NULL) ==
              PFLREF_OK);
    for (size_t k = 0; k < 3; k++) {
        ck_assert_msg(drawn[k] == expect_drawn[k], "numpy seed 42: drawn[%zu]"
                      " = %zu, numpy gives %zu", k, drawn[k],
                      expect_drawn[k]);
        ck_assert_msg(chosen[k] == expect_chosen[k], "numpy seed 42: "
                      "chosen[%zu] = %zu, expected %zu", k, chosen[k],
                      expect_chosen[k]);
    }
    pflref_sampler_free(s);
}
END_TEST

START_TEST(test_numpy_matches_recorded_choice)
{
    /* req: sampling.numpy */
    golden_ctx *c = golden_ctx_new(PFLREF_SAMPLER_NUMPY_LEGACY);
    size_t count = golden_each("choice", check_choice_record, c);
    golden_ctx_free(c);
    ck_assert_msg(count >= 250, "only %zu choice records in %s", count,
                  GOLDEN);
}
END_TEST

START_TEST(test_numpy_matches_recorded_permutation)
{
    golden_ctx *c = golden_ctx_new(PFLREF_SAMPLER_NUMPY_LEGACY);
    size_t count = golden_each("permutation", check_permutation_record, c);
    size_t tails = golden_each("permutation_tail",
                               check_permutation_tail_record, c);
    golden_ctx_free(c);
    ck_assert_msg(count >= 5 && tails >= 6, "only %zu permutation and %zu "
                  "permutation_tail records in %s", count, tails, GOLDEN);
}
END_TEST

START_TEST(test_numpy_distinct_in_range)
{
    check_shape_grid(PFLREF_SAMPLER_NUMPY_LEGACY);
}
END_TEST

/* drawn = NULL gives the same chosen as a call that records drawn. */
START_TEST(test_drawn_may_be_null)
{
    for (int kind = 0; kind < 2; kind++) {
        size_t a[7], b[7], d[7];
        pflref_sampler *s = pflref_sampler_alloc((pflref_sampler_kind)kind,
                                                 40);
        ck_assert(s != NULL);
        ck_assert(pflref_sampler_choose(s, 99, 40, 7, a, NULL, NULL) ==
                  PFLREF_OK);
        ck_assert(pflref_sampler_choose(s, 99, 40, 7, b, d, NULL) ==
                  PFLREF_OK);
        for (size_t k = 0; k < 7; k++)
            ck_assert_msg(a[k] == b[k], "%s: chosen depends on whether "
                          "drawn is recorded (entry %zu)",
                          pflref_sampler_kind_name((pflref_sampler_kind)kind),
                          k);
        pflref_sampler_free(s);
    }
}
END_TEST

/* Inclusion probability m/N (spec notes §3.5): over seeds 1..20000 with
 * N = 10, m = 3 every client's frequency is within 0.02 of 0.3 (the
 * standard error is √(0.3·0.7/20000) ≈ 0.0032, so 0.02 is about 6σ). */
static void check_inclusion(pflref_sampler_kind kind)
{
    enum { N = 10, M = 3, RUNS = 20000 };
    size_t hits[N] = {0};
    size_t chosen[M];
    pflref_sampler *s = pflref_sampler_alloc(kind, N);
    ck_assert(s != NULL);
    for (unsigned long seed = 1; seed <= RUNS; seed++) {
        ck_assert(pflref_sampler_choose(s, seed, N, M, chosen, NULL, NULL) ==
                  PFLREF_OK);
        for (size_t k = 0; k < M; k++)
            hits[chosen[k]]++;
    }
    pflref_sampler_free(s);
    for (size_t i = 0; i < N; i++) {
        double f = (double)hits[i] / RUNS;
        ck_assert_msg(fabs(f - 0.3) < 0.02, "%s: client %zu included with "
                      "frequency %.4f, expected m/N = 0.3",
                      pflref_sampler_kind_name(kind), i, f);
    }
}

START_TEST(test_gsl_inclusion_frequency)
{
    /* req: sampling.lemma21.incl */
    check_inclusion(PFLREF_SAMPLER_GSL);
}
END_TEST

START_TEST(test_numpy_inclusion_frequency)
{
    /* req: sampling.lemma21.incl, sampling.numpy */
    check_inclusion(PFLREF_SAMPLER_NUMPY_LEGACY);
}
END_TEST

/* ---------------------------------------------------------------------
 * Argument errors of the sampler
 * ------------------------------------------------------------------- */

/* Expect `call` to fail with `status` and err.where equal to `where`. */
#define EXPECT_ERROR(call, status_, where_)                                   \
    do {                                                                     \
        pflref_error err_;                                                   \
        pflref_error_clear(&err_);                                           \
        pflref_error *err = &err_;                                           \
        pflref_status st_ = (call);                                          \
        ck_assert_msg(st_ == (status_), "%s returned %d, expected %d",        \
                      #call, (int)st_, (int)(status_));                       \
        ck_assert_msg(err->status == (status_), "%s: err.status not set",     \
                      #call);                                                \
        ck_assert_msg(strcmp(err->where, (where_)) == 0,                     \
                      "%s: where = \"%s\", expected \"%s\"", #call,          \
                      err->where, (where_));                                 \
        ck_assert_msg(err->message[0] != '\0', "%s: empty message", #call);  \
    } while (0)

START_TEST(test_choose_rejects_m_zero)
{
    size_t c[4];
    pflref_sampler *s = pflref_sampler_alloc(PFLREF_SAMPLER_GSL, 4);
    ck_assert(s != NULL);
    EXPECT_ERROR(pflref_sampler_choose(s, 1, 4, 0, c, NULL, err),
                 PFLREF_EINVAL, "m");
    pflref_sampler_free(s);
}
END_TEST

START_TEST(test_choose_rejects_m_over_N)
{
    size_t c[8];
    pflref_sampler *s = pflref_sampler_alloc(PFLREF_SAMPLER_NUMPY_LEGACY, 8);
    ck_assert(s != NULL);
    EXPECT_ERROR(pflref_sampler_choose(s, 1, 4, 5, c, NULL, err),
                 PFLREF_EINVAL, "m");
    pflref_sampler_free(s);
}
END_TEST

START_TEST(test_choose_rejects_N_over_N_max)
{
    size_t c[8];
    pflref_sampler *s = pflref_sampler_alloc(PFLREF_SAMPLER_GSL, 4);
    ck_assert(s != NULL);
    EXPECT_ERROR(pflref_sampler_choose(s, 1, 5, 2, c, NULL, err),
                 PFLREF_EINVAL, "N");
    pflref_sampler_free(s);
}
END_TEST

START_TEST(test_choose_rejects_seed_over_32_bits)
{
    size_t c[2];
    for (int kind = 0; kind < 2; kind++) {
        pflref_sampler *s = pflref_sampler_alloc((pflref_sampler_kind)kind,
                                                 4);
        ck_assert(s != NULL);
        EXPECT_ERROR(pflref_sampler_choose(s, PFLREF_SEED_MAX + 1, 4, 2, c,
                                           NULL, err),
                     PFLREF_EINVAL, "seed");
        pflref_sampler_free(s);
    }
}
END_TEST

START_TEST(test_numpy_rejects_seed_zero)
{
    size_t c[2];
    pflref_sampler *s = pflref_sampler_alloc(PFLREF_SAMPLER_NUMPY_LEGACY, 4);
    ck_assert(s != NULL);
    EXPECT_ERROR(pflref_sampler_choose(s, 0, 4, 2, c, NULL, err),
                 PFLREF_EINVAL, "seed");
    pflref_sampler_free(s);
}
END_TEST

START_TEST(test_choose_rejects_null_arguments)
{
    size_t c[2];
    pflref_sampler *s = pflref_sampler_alloc(PFLREF_SAMPLER_GSL, 4);
    ck_assert(s != NULL);
    EXPECT_ERROR(pflref_sampler_choose(NULL, 1, 4, 2, c, NULL, err),
                 PFLREF_EINVAL, "s");
    EXPECT_ERROR(pflref_sampler_choose(s, 1, 4, 2, NULL, NULL, err),
                 PFLREF_EINVAL, "chosen");
    /* err = NULL: the status alone. */
    ck_assert(pflref_sampler_choose(s, 1, 4, 0, c, NULL, NULL) ==
              PFLREF_EINVAL);
    pflref_sampler_free(s);
}
END_TEST

START_TEST(test_alloc_refuses_bad_kind_and_size)
{
    ck_assert_msg(pflref_sampler_alloc((pflref_sampler_kind)2, 4) == NULL,
                  "an unknown sampler kind was accepted");
    ck_assert_msg(pflref_sampler_alloc(PFLREF_SAMPLER_GSL,
                                       (size_t)PFLREF_SEED_MAX + 2) == NULL,
                  "N_max > 2^32 was accepted");
    pflref_sampler_free(NULL);
    /* N_max = 0: a valid sampler that can draw from no population. */
    size_t c[1];
    pflref_sampler *s = pflref_sampler_alloc(PFLREF_SAMPLER_GSL, 0);
    ck_assert(s != NULL);
    EXPECT_ERROR(pflref_sampler_choose(s, 1, 1, 1, c, NULL, err),
                 PFLREF_EINVAL, "N");
    pflref_sampler_free(s);
}
END_TEST

/* ---------------------------------------------------------------------
 * Shuffle and draws
 * ------------------------------------------------------------------- */

/* Spec notes §3.1 [script]: seed 42, the shuffle of 0..9 is
 * [5 0 6 2 9 4 1 8 7 3]. */
START_TEST(test_shuffle_notes_example)
{
    static const size_t expect[] = {5, 0, 6, 2, 9, 4, 1, 8, 7, 3};
    size_t perm[10];
    for (size_t i = 0; i < 10; i++)
        perm[i] = i;
    ck_assert(pflref_shuffle(42, perm, 10, NULL) == PFLREF_OK);
    for (size_t i = 0; i < 10; i++)
        ck_assert_msg(perm[i] == expect[i], "shuffle seed 42: perm[%zu] = "
                      "%zu, the notes record %zu", i, perm[i], expect[i]);
}
END_TEST

static void check_shuffle_record(const golden_record *rec, void *ctx)
{
    (void)ctx;
    const unsigned long seed = head_ul(rec, 0);
    const size_t n = head_ul(rec, 1);
    size_t *perm = malloc(n * sizeof *perm);
    size_t *expect = malloc(n * sizeof *expect);
    ck_assert(perm != NULL && expect != NULL);
    values_size(rec, expect, n);
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    ck_assert(pflref_shuffle(seed, perm, n, NULL) == PFLREF_OK);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(perm[i] == expect[i], "shuffle seed %lu n %zu: "
                      "perm[%zu] = %zu, recorded %zu", seed, n, i, perm[i],
                      expect[i]);
    free(perm);
    free(expect);
}

START_TEST(test_shuffle_matches_recorded)
{
    size_t count = golden_each("gsl_shuffle", check_shuffle_record, NULL);
    ck_assert_msg(count >= 20, "only %zu gsl_shuffle records", count);
}
END_TEST

/* n = 0 and n = 1 need no draw and change nothing (n = 0 with NULL). */
START_TEST(test_shuffle_degenerate_sizes)
{
    size_t one[1] = {0};
    ck_assert(pflref_shuffle(5, NULL, 0, NULL) == PFLREF_OK);
    ck_assert(pflref_shuffle(5, one, 1, NULL) == PFLREF_OK);
    ck_assert_msg(one[0] == 0, "shuffling one item changed it");
}
END_TEST

START_TEST(test_shuffle_rejects_bad_arguments)
{
    size_t p[3] = {0, 1, 2};
    EXPECT_ERROR(pflref_shuffle(1, NULL, 3, err), PFLREF_EINVAL, "perm");
    EXPECT_ERROR(pflref_shuffle(PFLREF_SEED_MAX + 1, p, 3, err),
                 PFLREF_EINVAL, "seed");
    /* Refused before the array is touched. */
    EXPECT_ERROR(pflref_shuffle(1, p, (size_t)PFLREF_SEED_MAX + 1, err),
                 PFLREF_EINVAL, "n");
}
END_TEST

typedef pflref_status (*draw_fn)(unsigned long, double, double *, size_t,
                                 pflref_error *);

static void check_draw_record(const golden_record *rec, draw_fn fn)
{
    const unsigned long seed = head_ul(rec, 0);
    ck_assert(rec->nhead == 3);
    const double p = strtod(rec->head[1], NULL);
    const size_t n = head_ul(rec, 2);
    double x[32], expect[32];
    ck_assert(n <= 32);
    values_double(rec, expect, n);
    ck_assert(fn(seed, p, x, n, NULL) == PFLREF_OK);
    for (size_t k = 0; k < n; k++)
        ck_assert_msg(x[k] == expect[k], "%s seed %lu (%g): x[%zu] = %.17g, "
                      "recorded %.17g", rec->kind, seed, p, k, x[k],
                      expect[k]);
}

static void check_gaussian_record(const golden_record *rec, void *ctx)
{
    (void)ctx;
    check_draw_record(rec, pflref_draw_gaussian);
}

static void check_uniform_record(const golden_record *rec, void *ctx)
{
    (void)ctx;
    check_draw_record(rec, pflref_draw_uniform);
}

START_TEST(test_gaussian_matches_recorded)
{
    size_t count = golden_each("gsl_gaussian", check_gaussian_record, NULL);
    ck_assert_msg(count >= 3, "only %zu gsl_gaussian records", count);
}
END_TEST

START_TEST(test_uniform_matches_recorded)
{
    size_t count = golden_each("gsl_uniform", check_uniform_record, NULL);
    ck_assert_msg(count >= 3, "only %zu gsl_uniform records", count);
}
END_TEST

/* scale·(2u − 1) with u ∈ [0, 1) lies in [−scale, scale); sd = 0 gives
 * zeros. */
START_TEST(test_draw_ranges)
{
    double x[500];
    ck_assert(pflref_draw_uniform(3, 2.385, x, 500, NULL) == PFLREF_OK);
    for (size_t k = 0; k < 500; k++)
        ck_assert_msg(x[k] >= -2.385 && x[k] < 2.385, "uniform draw %zu = "
                      "%g is outside [-2.385, 2.385)", k, x[k]);
    ck_assert(pflref_draw_gaussian(3, 0.0, x, 500, NULL) == PFLREF_OK);
    for (size_t k = 0; k < 500; k++)
        ck_assert_msg(x[k] == 0.0, "N(0, 0) draw %zu = %g", k, x[k]);
}
END_TEST

START_TEST(test_draws_reject_bad_arguments)
{
    double x[2];
    EXPECT_ERROR(pflref_draw_gaussian(1, 1.0, NULL, 2, err), PFLREF_EINVAL,
                 "x");
    EXPECT_ERROR(pflref_draw_gaussian(1, -0.5, x, 2, err), PFLREF_EINVAL,
                 "sd");
    EXPECT_ERROR(pflref_draw_gaussian(1, NAN, x, 2, err), PFLREF_EINVAL,
                 "sd");
    EXPECT_ERROR(pflref_draw_uniform(1, INFINITY, x, 2, err), PFLREF_EINVAL,
                 "scale");
    EXPECT_ERROR(pflref_draw_uniform(PFLREF_SEED_MAX + 1, 1.0, x, 2, err),
                 PFLREF_EINVAL, "seed");
    /* n = 0: nothing to draw, NULL allowed. */
    ck_assert(pflref_draw_gaussian(1, 1.0, NULL, 0, NULL) == PFLREF_OK);
    ck_assert(pflref_draw_uniform(1, 1.0, NULL, 0, NULL) == PFLREF_OK);
}
END_TEST

Suite *sampler_suite(void)
{
    Suite *s = suite_create("sampler");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_kind_names);
    tcase_add_test(tc, test_gsl_distinct_in_range_ascending);
    tcase_add_test(tc, test_gsl_notes_examples);
    tcase_add_test(tc, test_gsl_matches_recorded);
    tcase_add_test(tc, test_gsl_all_clients);
    tcase_add_test(tc, test_gsl_seed_zero_is_4357);
    tcase_add_test(tc, test_numpy_notes_example);
    tcase_add_test(tc, test_numpy_matches_recorded_choice);
    tcase_add_test(tc, test_numpy_matches_recorded_permutation);
    tcase_add_test(tc, test_numpy_distinct_in_range);
    tcase_add_test(tc, test_drawn_may_be_null);
    tcase_add_test(tc, test_gsl_inclusion_frequency);
    tcase_add_test(tc, test_numpy_inclusion_frequency);
    tcase_add_test(tc, test_choose_rejects_m_zero);
    tcase_add_test(tc, test_choose_rejects_m_over_N);
    tcase_add_test(tc, test_choose_rejects_N_over_N_max);
    tcase_add_test(tc, test_choose_rejects_seed_over_32_bits);
    tcase_add_test(tc, test_numpy_rejects_seed_zero);
    tcase_add_test(tc, test_choose_rejects_null_arguments);
    tcase_add_test(tc, test_alloc_refuses_bad_kind_and_size);
    tcase_add_test(tc, test_shuffle_notes_example);
    tcase_add_test(tc, test_shuffle_matches_recorded);
    tcase_add_test(tc, test_shuffle_degenerate_sizes);
    tcase_add_test(tc, test_shuffle_rejects_bad_arguments);
    tcase_add_test(tc, test_gaussian_matches_recorded);
    tcase_add_test(tc, test_uniform_matches_recorded);
    tcase_add_test(tc, test_draw_ranges);
    tcase_add_test(tc, test_draws_reject_bad_arguments);
    suite_add_tcase(s, tc);
    return s;
}
