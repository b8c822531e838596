/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_golden.c: content hashes (ref/io/sha256.c, ref/io/canonical.c)
 * and the comparison behind verify and check (ref/oracle/golden.c, on the
 * records of ref/io/vector.c and ref/io/records.c): digits, ULPs,
 * tolerances, first divergence, re-synchronisation. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/mca.h"
#include "core/mca_decide.h"
#include "io/canonical.h"
#include "io/sha256.h"
#include "suites.h"
#include "testutil.h"

/* The vectors below are written by hand without their content hash:
 * verify and check them with it (tu_vector_hashed; a vector that has a
 * "hash" is passed as it is). */
static pflref_status verify_hashed(const char *text, size_t len,
                                   const char *base_dir,
                                   pflref_golden_report *rep,
                                   pflref_error *err)
{
    (void)len;
    char *t = tu_vector_hashed(text, 0);
    pflref_status st = pflref_golden_verify(t, strlen(t), base_dir, rep, err);
    free(t);
    return st;
}

static pflref_status check_hashed(const char *vec, size_t len,
                                  const char *base_dir, const char *cand,
                                  size_t cand_len,
                                  const pflref_check_options *opt,
                                  pflref_golden_report *rep, pflref_error *err)
{
    (void)len;
    char *t = tu_vector_hashed(vec, 0);
    pflref_status st = pflref_golden_check(t, strlen(t), base_dir, cand,
                                           cand_len, opt, rep, err);
    free(t);
    return st;
}

static const pflref_check_options OPT0 = {PFLREF_PRECISION_FP64, 0, 0, 1,
                                          0, 0.0, 0};
static const pflref_check_options OPT1 = {PFLREF_PRECISION_FP64, 1, 0, 1,
                                          0, 0.0, 0};

/* FIPS 180-2 Appendix B.1 and B.2 ("abc", the 448-bit message), the empty
 * message, and padding boundaries (55/56, 64 and 119 bytes: one, two and
 * three final blocks) from Python's hashlib, an independent implementation. */
START_TEST(test_sha256_vectors)
{
    static const struct {
        const char *msg;
        size_t repeat;  /* msg is 'a' repeated this many times when > 0 */
        const char *hex;
    } cases[] = {
        {"abc", 0, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 0,
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {NULL, 56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
        {NULL, 64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
        {NULL, 119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[128], hex[65];
        const char *msg = cases[i].msg;
        size_t len;
        if (msg == NULL) {
            memset(buf, 'a', cases[i].repeat);
            msg = buf;
            len = cases[i].repeat;
        } else {
            len = strlen(msg);
        }
        pflref_sha256_hex((const unsigned char *)msg, len, hex);
        ck_assert_msg(strcmp(hex, cases[i].hex) == 0, "case %zu: %s", i, hex);
    }
}
END_TEST

/* The canonical form (golden/README.md): sorted keys, no spaces, ASCII
 * escapes as Python's json.dumps(ensure_ascii=True) writes them, reals as
 * %.17g with jansson-style exponent and ".0" fix-ups.  The expected text
 * follows that definition by hand; the 17 digits of each real are those
 * Python's format(x, '.17g') prints (e.g. 2.5e300 → 2.5000000000000001e+300),
 * and the escapes are those of json.dumps(ensure_ascii=True). */
START_TEST(test_canonical_json)
{
    const char *in =
        "{\"b\": [1, 1.0, -0.0, 0.1, 1e20, 1e-7, 2.5e300, true, false, null],"
        " \"a\": {\"z\": \"\\u00e9\\ud83d\\ude00\\u0001\\u007f\\\"\\\\\\n\", \"y\": 3}}";
    json_t *v = json_loads(in, 0, NULL);
    ck_assert_ptr_nonnull(v);
    char *c = pflref_canonical_json(v);
    const char *want =
        "{\"a\":{\"y\":3,\"z\":\"\\u00e9\\ud83d\\ude00\\u0001\\u007f\\\"\\\\\\n\"},"
        "\"b\":[1,1.0,-0.0,0.10000000000000001,1e20,9.9999999999999995e-8,"
        "2.5000000000000001e300,true,false,null]}";
    ck_assert_str_eq(c, want);
    char hash[PFLREF_HASH_MAX];
    ck_assert(pflref_content_hash(v, hash));
    ck_assert_msg(strncmp(hash, "sha256:", 7) == 0 && strlen(hash) == 71, "%s", hash);
    free(c);
    json_decref(v);
}
END_TEST

/* The hash cases written by the independent Python implementation
 * (golden/canonical/cases.json, golden/pflref_golden.py): same canonical
 * text and the same hash for every case. */
START_TEST(test_canonical_cases)
{
    char *path = tu_repo_path("golden/canonical/cases.json");
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, NULL);
    ck_assert_msg(root != NULL, "cannot read %s", path);
    json_t *cases = json_object_get(root, "cases");
    ck_assert_uint_gt(json_array_size(cases), 5);
    for (size_t i = 0; i < json_array_size(cases); i++) {
        json_t *c = json_array_get(cases, i);
        const char *name = json_string_value(json_object_get(c, "name"));
        const char *text = json_string_value(json_object_get(c, "text"));
        const char *want = json_string_value(json_object_get(c, "canonical"));
        const char *hash = json_string_value(json_object_get(c, "hash"));
        ck_assert_msg(text && want && hash, "case %zu is incomplete", i);
        json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
        ck_assert_msg(v != NULL, "case %s: text does not parse", name);
        char *got = pflref_canonical_json(v);
        ck_assert_msg(strcmp(got, want) == 0, "case %s:\n got  %s\n want %s",
                      name, got, want);
        char h[PFLREF_HASH_MAX];
        ck_assert(pflref_content_hash(v, h));
        ck_assert_msg(strcmp(h, hash) == 0, "case %s: hash %s, want %s", name,
                      h, hash);
        free(got);
        json_decref(v);
    }
    json_decref(root);
    free(path);
}
END_TEST

/* A vector whose hash is a bare string (the spec-only hash of before) is
 * malformed; tests/test_tamper.c has the edits a hash catches. */
START_TEST(test_hash_mismatch_rejected)
{
    const char *text =
        "{\"format\": \"pflref-golden/1\", \"id\": \"t/hash\", \"hash\": \"sha256:00\", \"title\": \"a test vector\", \"provenance\": {\"kind\": \"hand\"}, \"flags\": [],"
        " \"spec\": {\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"quadratic\", \"d\": 1},"
        "   \"problem\": {\"clients\": [{\"a\": [1], \"c\": [2]}]},"
        "   \"algorithm\": {\"name\": \"local\", \"hyperparameters\": {\"eta\": 0.5}},"
        "   \"schedule\": {\"kind\": \"given\", \"rounds\": [{\"clients\": [0], \"batches\": [[[0]]]}]}},"
        " \"tolerance\": {\"atol\": 0, \"rtol\": 0, \"basis\": \"exact dyadic arithmetic\"},"
        " \"expected\": {\"final\": {\"v\": [[1]]}}}";
    pflref_golden_report rep;
    pflref_error err;
    ck_assert_int_eq(verify_hashed(text, strlen(text), NULL, &rep, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "hash");
}
END_TEST

/* A one-quadratic vector: v ← v − ½(v − 2) from 0 gives exactly 1. */
static const char VEC[] =
    "{\"format\": \"pflref-golden/1\", \"id\": \"t/one\", \"title\": \"a test vector\", \"provenance\": {\"kind\": \"hand\"}, \"flags\": [],"
    " \"spec\": {\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"quadratic\", \"d\": 1},"
    "   \"problem\": {\"clients\": [{\"a\": [1], \"c\": [2]}]},"
    "   \"algorithm\": {\"name\": \"local\", \"hyperparameters\": {\"eta\": 0.5}},"
    "   \"schedule\": {\"kind\": \"given\", \"rounds\": [{\"clients\": [0], \"batches\": [[[0], [0]]]}]}},"
    " \"tolerance\": {\"atol\": 0, \"rtol\": 0, \"basis\": \"exact dyadic arithmetic\"},"
    " \"expected\": {\"trajectory\": ["
    "   {\"event\": \"step\", \"phase\": \"train\", \"round\": 0, \"client\": 0, \"step\": 1, \"name\": \"v\", \"value\": [1]},"
    "   {\"event\": \"step\", \"phase\": \"train\", \"round\": 0, \"client\": 0, \"step\": 2, \"name\": \"v\", \"value\": [1.5]}],"
    "  \"final\": {\"v\": [[1.5]]}}}";

static void check_candidate(const char *cand, pflref_precision prec,
                            pflref_golden_report *rep)
{
    pflref_error err;
    pflref_error_clear(&err);
    const pflref_check_options opt = {prec, 0, 0, 1, 0, 0.0, 0};
    ck_assert_msg(check_hashed(VEC, strlen(VEC), NULL, cand,
                                      strlen(cand), &opt, rep, &err)
                      == PFLREF_OK, "%s: %s", err.where, err.message);
}

/* Digits and ULPs: a candidate one double above 1.5 at the end is 1 ulp
 * away, ≈ 15.65 correct digits; within the fp64 default tolerance. */
START_TEST(test_digits_and_ulps)
{
    char cand[1024];
    double next = nextafter(1.5, 2.0);
    snprintf(cand, sizeof cand,
             "{\"format\": \"pflref-result/1\", \"id\": \"t/one\", \"trajectory\": ["
             "{\"event\": \"step\", \"phase\": \"train\", \"round\": 0, \"client\": 0, \"step\": 1, \"name\": \"v\", \"value\": [1]},"
             "{\"event\": \"step\", \"phase\": \"train\", \"round\": 0, \"client\": 0, \"step\": 2, \"name\": \"v\", \"value\": [%.17g]}],"
             " \"final\": {\"v\": [[1.5]]}}", next);
    pflref_golden_report rep;
    check_candidate(cand, PFLREF_PRECISION_FP64, &rep);
    ck_assert_int_eq(rep.quantities, 3);
    ck_assert_int_eq(rep.numbers, 3);
    ck_assert_int_eq(rep.mismatches, 0);
    ck_assert_uint_eq(rep.max_ulp, 1);
    /* −log10(2⁻⁵² / 1.5) = 15.83 */
    ck_assert_double_eq_tol(rep.min_lre, -log10(ldexp(1.0, -52) / 1.5), 1e-12);
    ck_assert_double_eq(rep.max_abs_err, ldexp(1.0, -52));
    /* one name, "v": 2 step records and the final state */
    ck_assert_int_eq(rep.n_names, 1);
    ck_assert_str_eq(rep.by_name[0].name, "v");
    ck_assert_int_eq(rep.by_name[0].quantities, 3);
    ck_assert_uint_eq(rep.by_name[0].max_ulp, 1);
}
END_TEST

/* fp32 tolerances from Monte Carlo arithmetic: a candidate off by ~3 u
 * (u = 2^-24) fails as fp64 and passes as fp32; off by 3e-5 (~500 u, which
 * the old fixed fp32 floor rtol 1e-4 let pass) it fails as fp32 and passes
 * as bf16; a missing record is a divergence marked missing. */
START_TEST(test_precision_and_missing)
{
    const char *near =
        "{\"format\": \"pflref-result/1\", \"trajectory\": ["
        "{\"event\": \"step\", \"phase\": \"train\", \"round\": 0, \"client\": 0, \"step\": 1, \"name\": \"v\", \"value\": [1.00000018]},"
        "{\"event\": \"step\", \"phase\": \"train\", \"round\": 0, \"client\": 0, \"step\": 2, \"name\": \"v\", \"value\": [1.5]}],"
        " \"final\": {\"v\": [[1.5]]}}";
    const char *cand =
        "{\"format\": \"pflref-result/1\", \"trajectory\": ["
        "{\"event\": \"step\", \"phase\": \"train\", \"round\": 0, \"client\": 0, \"step\": 1, \"name\": \"v\", \"value\": [1.000003]},"
        "{\"event\": \"step\", \"phase\": \"train\", \"round\": 0, \"client\": 0, \"step\": 2, \"name\": \"v\", \"value\": [1.5]}],"
        " \"final\": {\"v\": [[1.5]]}}";
    pflref_golden_report rep;
    check_candidate(cand, PFLREF_PRECISION_FP64, &rep);
    ck_assert_int_eq(rep.mismatches, 1);
    ck_assert_int_eq(rep.first.step, 1);
    ck_assert_double_eq(rep.first.got, 1.000003);
    const char *far =
        "{\"format\": \"pflref-result/1\", \"trajectory\": ["
        "{\"event\": \"step\", \"phase\": \"train\", \"round\": 0, \"client\": 0, \"step\": 1, \"name\": \"v\", \"value\": [1.00003]},"
        "{\"event\": \"step\", \"phase\": \"train\", \"round\": 0, \"client\": 0, \"step\": 2, \"name\": \"v\", \"value\": [1.5]}],"
        " \"final\": {\"v\": [[1.5]]}}";
    check_candidate(near, PFLREF_PRECISION_FP64, &rep);
    ck_assert_int_eq(rep.mismatches, 1);
    check_candidate(near, PFLREF_PRECISION_FP32, &rep);
    ck_assert_int_eq(rep.mismatches, 0);
    ck_assert_int_eq(rep.mca, 1);
    ck_assert_int_eq(rep.mca_runs, PFLREF_MCA_RUNS);
    ck_assert_double_eq(rep.mca_u, ldexp(1.0, -24));
    ck_assert_int_eq(rep.mca_chaotic, 0);
    ck_assert(rep.mca_seeds[0] != rep.mca_seeds[1]);
    check_candidate(far, PFLREF_PRECISION_FP32, &rep);
    ck_assert_int_eq(rep.mismatches, 1);
    ck_assert_int_eq(rep.first.step, 1);
    check_candidate(far, PFLREF_PRECISION_BF16, &rep);
    ck_assert_int_eq(rep.mismatches, 0);
    ck_assert_double_eq(rep.mca_u, ldexp(1.0, -8));
    const char *partial =
        "{\"format\": \"pflref-result/1\", \"trajectory\": ["
        "{\"event\": \"step\", \"phase\": \"train\", \"round\": 0, \"client\": 0, \"step\": 1, \"name\": \"v\", \"value\": [1]}]}";
    check_candidate(partial, PFLREF_PRECISION_FP64, &rep);
    ck_assert_int_eq(rep.mismatches, 2);
    ck_assert_int_eq(rep.missing, 2);
    ck_assert_int_eq(rep.first.missing, 1);
    ck_assert_int_eq(rep.first.step, 2);
    ck_assert_int_eq(rep.n_listed, 2);
    ck_assert_str_eq(rep.listed[1].event, "final");
    /* partial: what the candidate did not record is skipped, not failed */
    pflref_error err;
    const pflref_check_options part = {PFLREF_PRECISION_FP64, 0, 1, 1,
                                       0, 0.0, 0};
    ck_assert_int_eq(check_hashed(VEC, strlen(VEC), NULL, partial,
                                         strlen(partial), &part, &rep, &err),
                     PFLREF_OK);
    ck_assert_int_eq(rep.mismatches, 0);
    ck_assert_int_eq(rep.quantities, 1);
    ck_assert_int_eq(rep.skipped, 2);
    const char *none = "{\"format\": \"pflref-result/1\", \"meta\": {\"framework\": \"x\"}}";
    ck_assert_int_eq(check_hashed(VEC, strlen(VEC), NULL, none,
                                         strlen(none), &part, &rep, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "candidate");
    /* a candidate for another vector */
    const char *other = "{\"format\": \"pflref-result/1\", \"id\": \"t/zzz\"}";
    ck_assert_int_eq(check_hashed(VEC, strlen(VEC), NULL, other,
                                         strlen(other), &part, &rep, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "candidate:id");
}
END_TEST

/* A candidate that records one quantity twice: every record must meet the
 * expectation, so a wrong second value is a mismatch, reported as the
 * duplicate it is, and its error is in the statistics (which never
 * contradict the first divergence; the numbers counted are the expected
 * ones); a repeated right value passes. */
START_TEST(test_candidate_duplicates)
{
#define STEP(s, v) "{\"event\": \"step\", \"phase\": \"train\", \"round\": 0," \
    " \"client\": 0, \"step\": " s ", \"name\": \"v\", \"value\": [" v "]}"
    const char *twice_wrong =
        "{\"format\": \"pflref-result/1\", \"trajectory\": [" STEP("1", "1") ","
        STEP("2", "1.5") "," STEP("1", "7") "], \"final\": {\"v\": [[1.5]]}}";
    pflref_golden_report rep;
    check_candidate(twice_wrong, PFLREF_PRECISION_FP64, &rep);
    ck_assert_int_eq(rep.mismatches, 1);
    ck_assert_int_eq(rep.quantities, 3);
    ck_assert_int_eq(rep.numbers, 3);
    ck_assert_int_eq(rep.first.step, 1);
    ck_assert_double_eq(rep.first.expected, 1.0);
    ck_assert_double_eq(rep.first.got, 7.0);
    ck_assert_uint_eq(rep.first.record, 2);
    ck_assert_double_eq(rep.max_abs_err, 6.0);
    const char *twice_right =
        "{\"format\": \"pflref-result/1\", \"trajectory\": [" STEP("1", "1") ","
        STEP("2", "1.5") "," STEP("2", "1.5") "], \"final\": {\"v\": [[1.5]]}}";
    check_candidate(twice_right, PFLREF_PRECISION_FP64, &rep);
    ck_assert_int_eq(rep.mismatches, 0);
#undef STEP
}
END_TEST

/* Re-synchronised checking of local-only: a candidate whose round-0 v is
 * wrong (1.25 instead of 1.5) but whose round 1 is computed correctly from
 * its own state is flagged at round 0 only; without resync round 1 differs
 * too. */
START_TEST(test_resync)
{
    const char *vec =
        "{\"format\": \"pflref-golden/1\", \"id\": \"t/two\", \"title\": \"a test vector\", \"provenance\": {\"kind\": \"hand\"}, \"flags\": [],"
        " \"spec\": {\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"quadratic\", \"d\": 1},"
        "   \"problem\": {\"clients\": [{\"a\": [1], \"c\": [2]}]},"
        "   \"algorithm\": {\"name\": \"local\", \"hyperparameters\": {\"eta\": 0.5}},"
        "   \"schedule\": {\"kind\": \"given\", \"rounds\": ["
        "     {\"clients\": [0], \"batches\": [[[0], [0]]]}, {\"clients\": [0], \"batches\": [[[0]]]}]}},"
        " \"tolerance\": {\"atol\": 0, \"rtol\": 0, \"basis\": \"exact dyadic arithmetic\"},"
        " \"expected\": {\"trajectory\": ["
        "   {\"event\": \"client_end\", \"phase\": \"train\", \"round\": 0, \"client\": 0, \"name\": \"v\", \"value\": [1.5]},"
        "   {\"event\": \"client_end\", \"phase\": \"train\", \"round\": 1, \"client\": 0, \"name\": \"v\", \"value\": [1.75]}]}}";
    /* round 1 from the candidate's 1.25: 1.25 − ½(1.25 − 2) = 1.625 */
    const char *cand =
        "{\"format\": \"pflref-result/1\", \"trajectory\": ["
        "{\"event\": \"client_end\", \"phase\": \"train\", \"round\": 0, \"client\": 0, \"name\": \"v\", \"value\": [1.25]},"
        "{\"event\": \"client_end\", \"phase\": \"train\", \"round\": 1, \"client\": 0, \"name\": \"v\", \"value\": [1.625]}]}";
    pflref_golden_report rep;
    pflref_error err;
    ck_assert_int_eq(check_hashed(vec, strlen(vec), NULL, cand, strlen(cand),
                                         &OPT0, &rep, &err),
                     PFLREF_OK);
    ck_assert_int_eq(rep.mismatches, 2);
    ck_assert_int_eq(check_hashed(vec, strlen(vec), NULL, cand, strlen(cand),
                                         &OPT1, &rep, &err),
                     PFLREF_OK);
    ck_assert_int_eq(rep.mismatches, 1);
    ck_assert_int_eq(rep.first.round, 0);
    ck_assert_double_eq(rep.first.expected, 1.5);
}
END_TEST

/* Per-quantity tolerance: v may differ by 1e-3 (above the ceiling, so
 * argued for in above_ceiling) while the default is exact;
 * provenance must be a known kind, and "self" needs regression-only. */
START_TEST(test_vector_metadata_and_tolerances)
{
    const char *head =
        "{\"format\": \"pflref-golden/1\", \"id\": \"t/tol\", \"title\": \"t\","
        " \"provenance\": {\"kind\": \"%s\"}, \"flags\": [%s],"
        " \"spec\": {\"format\": \"pflref-spec/1\", \"model\": {\"kind\": \"quadratic\", \"d\": 1},"
        "   \"problem\": {\"clients\": [{\"a\": [1], \"c\": [2]}]},"
        "   \"algorithm\": {\"name\": \"local\", \"hyperparameters\": {\"eta\": 0.5}},"
        "   \"schedule\": {\"kind\": \"given\", \"rounds\": [{\"clients\": [0], \"batches\": [[[0]]]}]}},"
        " \"tolerance\": {\"atol\": 0, \"rtol\": 0, \"basis\": \"exact\","
        "   \"per_quantity\": {\"v\": {\"atol\": 1e-3, \"rtol\": 0, \"basis\": \"planted\"}},"
        "   \"above_ceiling\": \"planted: the expected v is 1.0005 where the run gives 1\"},"
        " \"expected\": {\"final\": {\"v\": [[1.0005]]}}}";
    char text[2048];
    pflref_golden_report rep;
    pflref_error err;
    snprintf(text, sizeof text, head, "hand", "");
    ck_assert_int_eq(verify_hashed(text, strlen(text), NULL, &rep, &err),
                     PFLREF_OK);
    ck_assert_int_eq(rep.mismatches, 0);   /* |1 − 1.0005| ≤ 1e-3 for v */
    snprintf(text, sizeof text, head, "guess", "");
    ck_assert_int_eq(verify_hashed(text, strlen(text), NULL, &rep, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "provenance.kind");
    snprintf(text, sizeof text, head, "self", "");
    ck_assert_int_eq(verify_hashed(text, strlen(text), NULL, &rep, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "flags");
    snprintf(text, sizeof text, head, "self", "\"regression-only\"");
    ck_assert_int_eq(verify_hashed(text, strlen(text), NULL, &rep, &err),
                     PFLREF_OK);
    snprintf(text, sizeof text, head, "hand", "3");
    ck_assert_int_eq(verify_hashed(text, strlen(text), NULL, &rep, &err),
                     PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "flags[0]");
}
END_TEST

/* Malformed inputs name their side. */
START_TEST(test_malformed)
{
    pflref_golden_report rep;
    pflref_error err;
    const char *bad_vec = "{\"format\": \"pflref-golden/1\", \"id\": \"x\"}";
    ck_assert_int_eq(check_hashed(bad_vec, strlen(bad_vec), NULL, "{}", 2,
                                         &OPT0, &rep, &err),
                     PFLREF_EINVAL);
    ck_assert_msg(strncmp(err.where, "expected:", 9) == 0, "%s", err.where);
    ck_assert_int_eq(check_hashed(VEC, strlen(VEC), NULL, "[", 1,
                                         &OPT0, &rep, &err),
                     PFLREF_EINVAL);
    const char *bad_value = "{\"format\": \"pflref-result/1\", \"final\": {\"v\": [[\"x\"]]}}";
    ck_assert_int_eq(check_hashed(VEC, strlen(VEC), NULL, bad_value,
                                         strlen(bad_value), &OPT0, &rep, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "candidate:final.v[0][0]");
    const char *unknown = "{\"format\": \"pflref-result/1\", \"extra\": 1}";
    ck_assert_int_eq(check_hashed(VEC, strlen(VEC), NULL, unknown,
                                         strlen(unknown), &OPT0, &rep, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "candidate:extra");
    char id[64], flags[64];
    ck_assert_int_eq(pflref_golden_describe(VEC, strlen(VEC), id, sizeof id, flags,
                                            sizeof flags, &err), PFLREF_OK);
    ck_assert_str_eq(id, "t/one");
    ck_assert_str_eq(flags, "");
    ck_assert_int_eq(pflref_golden_describe("{}", 2, id, sizeof id, flags,
                                            sizeof flags, &err), PFLREF_EINVAL);
    ck_assert(!pflref_golden_is_vector("{}", 2));
    ck_assert(pflref_golden_is_vector(VEC, strlen(VEC)));
}
END_TEST

/* worked-samples.json edited by edit(root, arg), verified: the status and
 * err (and rep when it ran). */
static pflref_status verify_edited(void (*edit)(json_t *, size_t), size_t arg,
                                   pflref_golden_report *rep, pflref_error *err)
{
    char *path = tu_repo_path("golden/fedavg/worked-samples.json");
    char *text = tu_read(path);
    ck_assert_ptr_nonnull(text);
    json_t *root = json_loads(text, 0, NULL);
    ck_assert_ptr_nonnull(root);
    edit(root, arg);
    char *dumped = json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(17));
    ck_assert_ptr_nonnull(dumped);
    /* edited on purpose: the hash follows (tests/test_tamper.c edits
     * without it) */
    char *edited = tu_vector_hashed(dumped, 1);
    free(dumped);
    char *dir = tu_repo_path("golden/fedavg");
    pflref_error_clear(err);
    pflref_status st = verify_hashed(edited, strlen(edited), dir, rep, err);
    free(dir);
    free(edited);
    json_decref(root);
    free(text);
    free(path);
    return st;
}

/* A second copy of expected.trajectory[k] with another value. */
static void duplicate_record(json_t *root, size_t k)
{
    json_t *traj = json_object_get(json_object_get(root, "expected"), "trajectory");
    json_t *copy = json_deep_copy(json_array_get(traj, k));
    json_array_set_new(json_object_get(copy, "value"), 0, json_real(-123.5));
    json_array_append_new(traj, copy);
}

/* An id of n bytes. */
static void long_id(json_t *root, size_t n)
{
    char id[256];
    memset(id, 'a', n);
    id[n] = '\0';
    json_object_set_new(root, "id", json_string(id));
}

/* Defects the fuzzers found (fuzz/regressions/fuzz_check): a vector that
 * expects two values of one quantity cannot be met by any run and is
 * refused, naming both records; an id longer than the report holds would
 * be compared cut short and is refused (the schema's maxLength 127). */
START_TEST(test_vector_reader_limits)
{
    pflref_golden_report rep;
    pflref_error err;
    ck_assert_int_eq(verify_edited(duplicate_record, 3, &rep, &err), PFLREF_EINVAL);
    char where[64];
    char *path = tu_repo_path("golden/fedavg/worked-samples.json");
    json_t *root = json_load_file(path, 0, NULL);
    free(path);
    ck_assert_ptr_nonnull(root);
    snprintf(where, sizeof where, "expected.trajectory[%zu]",
             json_array_size(json_object_get(json_object_get(root, "expected"),
                                             "trajectory")));
    json_decref(root);
    ck_assert_str_eq(err.where, where);
    ck_assert_msg(strstr(err.message, "expected.trajectory[3]") != NULL, "%s",
                  err.message);
    ck_assert_int_eq(verify_edited(long_id, 128, &rep, &err), PFLREF_EINVAL);
    ck_assert_str_eq(err.where, "id");
    ck_assert_int_eq(verify_edited(long_id, 127, &rep, &err), PFLREF_OK);
    ck_assert_uint_eq(strlen(rep.id), 127);
    ck_assert_int_eq(rep.mismatches, 0);
}
END_TEST


/* Largest |x| over n draws of pflref_mca_perturb_terms(&x, 1) from x = 0. */
static double terms_spread(int n)
{
    double most = 0.0;
    for (int k = 0; k < n; k++) {
        double x = 0.0;
        pflref_mca_perturb_terms(&x, 1.0);
        most = fabs(x) > most ? fabs(x) : most;
    }
    return most;
}

/* pflref_mca_perturb_terms (ref/core/mca.h), the perturbation of a value
 * whose terms cancel (batch normalisation's backward pass): it moves by
 * u_inner ξ s, s the terms' magnitude, not |x| (x = 0 moves); u_inner is
 * float32's for fp32, bf16 and tf32 alike (their kernels accumulate in
 * float32), S = 4 times it in a probe run, from a stream of its own (the
 * seed's other draws unchanged); off, nothing moves. */
START_TEST(test_mca_terms_perturbation)
{
    ck_assert(terms_spread(8) == 0.0);                       /* off */
    const pflref_precision ps[] = {PFLREF_PRECISION_FP32,
                                   PFLREF_PRECISION_BF16,
                                   PFLREF_PRECISION_TF32};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        pflref_mca_begin(ps[i], 7);
        const double most = terms_spread(64);
        ck_assert(most > 0x1.0p-25 && most <= 0x1.0p-24);
        pflref_mca_begin_scaled(ps[i], 7, 4.0);
        const double probe = terms_spread(64);
        ck_assert(probe > 0x1.0p-24 && probe <= 0x1.0p-22);
    }
    /* its own stream: the other draws of a seed stay what they were */
    double a[4] = {1.0, 1.0, 1.0, 1.0}, b[4] = {1.0, 1.0, 1.0, 1.0};
    pflref_mca_begin(PFLREF_PRECISION_FP32, 7);
    pflref_mca_perturb(PFLREF_MCA_PRODUCT, a, 4);
    pflref_mca_begin(PFLREF_PRECISION_FP32, 7);
    ck_assert(terms_spread(3) > 0.0);
    pflref_mca_perturb(PFLREF_MCA_PRODUCT, b, 4);
    for (int k = 0; k < 4; k++)
        ck_assert(a[k] == b[k] && a[k] != 1.0);
    pflref_mca_begin(PFLREF_PRECISION_FP64, 7);              /* off */
    ck_assert(terms_spread(8) == 0.0);
    pflref_mca_begin(PFLREF_PRECISION_FP32, 7);
    pflref_mca_end();
    ck_assert(terms_spread(8) == 0.0);
}
END_TEST


/* pflref_mca_grad_open / pflref_mca_mark_exact (ref/core/mca.h): an entry
 * of the open gradient marked exact (every term of its sum an exact 0)
 * moves relative to itself under the GRADIENT perturbation, so a 0 stays
 * 0 and a nonzero entry moves by at most u of itself; an unmarked entry
 * moves normwise (u times the largest magnitude, a 0 too).  The perturb
 * closes the marks; a mark outside the open gradient, or running past its
 * end, marks nothing; off, nothing moves. */
START_TEST(test_mca_exact_marks)
{
    double g[6] = {0.0, 0.0, 4.0, 0.0, 1.0, 0.0};
    double other[2] = {0.0, 0.0};
    pflref_mca_grad_open(g, 6);              /* off: no-op */
    pflref_mca_mark_exact(g, 2, 1);
    pflref_mca_perturb(PFLREF_MCA_GRADIENT, g, 6);
    ck_assert(g[0] == 0.0 && g[2] == 4.0 && g[3] == 0.0);

    pflref_mca_begin(PFLREF_PRECISION_FP32, 7);
    pflref_mca_grad_open(g, 6);
    pflref_mca_mark_exact(g, 2, 2);          /* entries 0 and 2 */
    pflref_mca_mark_exact(other, 2, 1);      /* another array: ignored */
    pflref_mca_mark_exact(g + 5, 2, 1);      /* past the end: ignored */
    pflref_mca_perturb(PFLREF_MCA_GRADIENT, g, 6);
    ck_assert(g[0] == 0.0);                               /* marked 0 */
    ck_assert(g[2] != 4.0 && fabs(g[2] - 4.0) <= 4.0 * 0x1.0p-24);
    ck_assert(g[1] != 0.0 && fabs(g[1]) <= 4.0 * 0x1.0p-24); /* normwise */
    ck_assert(g[3] != 0.0 && g[5] != 0.0);
    ck_assert(g[4] != 1.0 && fabs(g[4] - 1.0) <= 4.0 * 0x1.0p-24);

    /* the marks were closed: the next perturbation is normwise */
    double h[3] = {0.0, 2.0, 0.0};
    pflref_mca_perturb(PFLREF_MCA_GRADIENT, h, 3);
    ck_assert(h[0] != 0.0 && h[2] != 0.0);
    /* marks of another gradient are not h's */
    double k[3] = {0.0, 2.0, 0.0};
    pflref_mca_grad_open(g, 6);
    pflref_mca_mark_exact(g, 6, 1);
    pflref_mca_perturb(PFLREF_MCA_GRADIENT, k, 3);
    ck_assert(k[0] != 0.0 && k[2] != 0.0);
    pflref_mca_end();
}
END_TEST


/* pflref_mca_begin/_begin_scaled/_end (include/pflref/golden.h): the calling thread's
 * runs perturbed as a check's perturbed run with that seed (one seed, one
 * trajectory; another seed, another; after _end the plain run), and the
 * zero test of ref/core/mca_decide.h: a sum within u·mass of 0 counts as
 * 0 only in a perturbed run, at the candidate's u (a probe's too, whose
 * values are perturbed at 4u). */
static char *run_vector_text(const char *text)
{
    char *out = NULL;
    pflref_error err;
    pflref_error_clear(&err);
    ck_assert_int_eq(pflref_spec_run_text(text, strlen(text), NULL, NULL,
                                          &out, &err), PFLREF_OK);
    return out;
}

START_TEST(test_mca_runs_and_zero_test)
{
    ck_assert_int_eq(pflref_mca_is_zero(0.0, 1.0), 1);
    ck_assert_int_eq(pflref_mca_is_zero(1e-9, 1.0), 0);
    pflref_mca_begin(PFLREF_PRECISION_BF16, 7);
    ck_assert_int_eq(pflref_mca_is_zero(3e-3, 1.0), 1);    /* ≤ 2^-8 */
    ck_assert_int_eq(pflref_mca_is_zero(-3e-3, 1.0), 1);
    ck_assert_int_eq(pflref_mca_is_zero(5e-3, 1.0), 0);
    ck_assert_int_eq(pflref_mca_is_zero(5e-3, 2.0), 1);
    pflref_mca_begin(PFLREF_PRECISION_FP32, 7);
    ck_assert_int_eq(pflref_mca_is_zero(3e-3, 1.0), 0);
    ck_assert_int_eq(pflref_mca_is_zero(5e-8, 1.0), 1);    /* ≤ 2^-24 */
    pflref_mca_begin(PFLREF_PRECISION_FP64, 7);             /* off */
    ck_assert_int_eq(pflref_mca_is_zero(5e-8, 1.0), 0);
    pflref_mca_begin(PFLREF_PRECISION_FP32, 7);
    pflref_mca_end();
    ck_assert_int_eq(pflref_mca_is_zero(5e-8, 1.0), 0);

    char *path = tu_repo_path("golden/fedavg/worked-samples.json");
    char *text = tu_read(path);
    ck_assert_ptr_nonnull(text);
    char *plain = run_vector_text(text);
    pflref_mca_begin(PFLREF_PRECISION_FP32, 7);
    char *a = run_vector_text(text);
    pflref_mca_end();
    pflref_mca_begin(PFLREF_PRECISION_FP32, 7);
    char *b = run_vector_text(text);
    pflref_mca_begin(PFLREF_PRECISION_FP32, 8);
    char *c = run_vector_text(text);
    pflref_mca_end();
    char *again = run_vector_text(text);
    /* the probes' runs (_scaled): scale 1 is the plain perturbation, 4
     * another run with the same draws; the zero test keeps the window u
     * of the candidate (a window of 4u made the bf16 probes skip nearly
     * every ALA of fedala/worked/official); scale 0 off */
    pflref_mca_begin_scaled(PFLREF_PRECISION_FP32, 7, 1.0);
    char *one = run_vector_text(text);
    pflref_mca_begin_scaled(PFLREF_PRECISION_FP32, 7, 4.0);
    ck_assert_int_eq(pflref_mca_is_zero(5e-8, 1.0), 1);     /* ≤ 2^-24 */
    ck_assert_int_eq(pflref_mca_is_zero(2e-7, 1.0), 0);     /* ≤ 4·2^-24 */
    ck_assert_int_eq(pflref_mca_is_zero(2e-7, 4.0), 1);
    pflref_mca_begin_scaled(PFLREF_PRECISION_BF16, 7, 4.0);
    ck_assert_int_eq(pflref_mca_is_zero(3e-3, 1.0), 1);    /* ≤ 2^-8 */
    ck_assert_int_eq(pflref_mca_is_zero(5e-3, 1.0), 0);    /* ≤ 4·2^-8 */
    pflref_mca_begin_scaled(PFLREF_PRECISION_FP32, 7, 4.0);
    char *four = run_vector_text(text);
    pflref_mca_begin_scaled(PFLREF_PRECISION_FP32, 7, 0.0);
    ck_assert_int_eq(pflref_mca_is_zero(5e-8, 1.0), 0);
    pflref_mca_end();
    ck_assert_str_eq(one, a);
    ck_assert_str_ne(four, a);
    ck_assert_str_ne(four, plain);
    free(one);
    free(four);
    ck_assert_str_eq(a, b);
    ck_assert_str_ne(a, c);
    ck_assert_str_ne(a, plain);
    ck_assert_str_eq(again, plain);
    free(a);
    free(b);
    free(c);
    free(plain);
    free(again);
    free(text);
    free(path);
}
END_TEST

Suite *golden_suite(void)
{
    Suite *s = suite_create("golden");
    TCase *tc = tcase_create("golden");
    tcase_add_test(tc, test_sha256_vectors);
    tcase_add_test(tc, test_canonical_json);
    tcase_add_test(tc, test_canonical_cases);
    tcase_add_test(tc, test_hash_mismatch_rejected);
    tcase_add_test(tc, test_digits_and_ulps);
    tcase_add_test(tc, test_precision_and_missing);
    tcase_add_test(tc, test_candidate_duplicates);
    tcase_add_test(tc, test_resync);
    tcase_add_test(tc, test_malformed);
    tcase_add_test(tc, test_vector_reader_limits);
    tcase_add_test(tc, test_vector_metadata_and_tolerances);
    tcase_add_test(tc, test_mca_runs_and_zero_test);
    tcase_add_test(tc, test_mca_terms_perturbation);
    tcase_add_test(tc, test_mca_exact_marks);
    suite_add_tcase(s, tc);
    return s;
}
