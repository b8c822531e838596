/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_tamper.c: golden vectors edited behind their generator's back
 * are refused (docs/bad-inputs.md, "Tampered golden vectors"; golden/
 * README.md, "Content hash", "Tolerance", "Flags").
 *
 * Each test copies a shipped vector (golden/fedavg/worked-samples.json)
 * into a fresh folder, changes one thing, and runs the pflref program:
 * `verify V` and `check V C` (C the vector's own expected values written as
 * a candidate, which passes the intact vector) must both exit 2, and
 * standard error must name the file and the part or field at fault.
 *
 *   - silent edits (the hash left as it was): an expected value, a
 *     tolerance, a flag, the title; a vector without its hash;
 *   - deliberate edits (the hash recomputed, as a generator would): a
 *     tolerance above the fp64 ceiling without an argument for it, and with
 *     one; a flag no registry holds, with the built-in registry and with a
 *     flags.json beside the vector or in a folder above it;
 *   - a vector in files (pflref freeze --arrays files): a byte of a
 *     referenced .npy file changed; the manifest edited to agree with it,
 *     or its digest taken out of the hash.
 *
 * test_tamper_catalogue ties the classes to docs/bad-inputs.md.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "io/sha256.h"
#include "suites.h"
#include "testutil.h"

#define SHIPPED "golden/fedavg/worked-samples.json"

/* The shipped vector, parsed. */
static json_t *shipped(void)
{
    char *path = tu_repo_path(SHIPPED);
    json_t *root = json_load_file(path, 0, NULL);
    ck_assert_msg(root != NULL, "cannot read %s", path);
    free(path);
    return root;
}

/* Write root to dir/name as a vector: with rehash its "hash" recomputed
 * (a deliberate edit), else as it stands (a silent one).  Returns the
 * path (malloc'd). */
static char *put(const char *dir, const char *name, const json_t *root,
                 int rehash)
{
    char *text = json_dumps(root, JSON_PRESERVE_ORDER | JSON_INDENT(1) |
                                      JSON_REAL_PRECISION(17));
    ck_assert_ptr_nonnull(text);
    if (rehash) {
        char *h = tu_vector_hashed(text, 1);
        free(text);
        text = h;
    }
    char *path = tu_join(dir, name);
    ck_assert_int_eq(tu_write(path, text), 0);
    free(text);
    return path;
}

/* The vector's expected values as a candidate result (it passes the
 * intact vector). */
static char *put_candidate(const char *dir, const json_t *vec)
{
    json_t *c = json_object();
    json_object_set_new(c, "format", json_string("pflref-result/1"));
    json_object_set(c, "id", json_object_get(vec, "id"));
    const json_t *exp = json_object_get(vec, "expected");
    json_object_set(c, "trajectory", json_object_get(exp, "trajectory"));
    json_object_set(c, "final", json_object_get(exp, "final"));
    char *path = put(dir, "candidate.json", c, 0);
    json_decref(c);
    return path;
}

/* Run `verify V` and `check V C`; each must exit `want` and, when want is
 * 2, name V's file and every phrase of says[] (NULL-terminated) on
 * standard error. */
static void expect_both(const char *v, const char *c, int want,
                        const char *const *says, const char *label)
{
    char args[4096], *err;
    for (int mode = 0; mode < 2; mode++) {
        if (mode == 0)
            snprintf(args, sizeof args, "verify %s", v);
        else
            snprintf(args, sizeof args, "check %s %s", v, c);
        int rc = tu_cli(args, NULL, &err);
        ck_assert_msg(rc == want, "%s: %s exits %d, expected %d:\n%s", label,
                      mode ? "check" : "verify", rc, want, err);
        for (size_t k = 0; want == 2 && says[k] != NULL; k++)
            ck_assert_msg(strstr(err, says[k]) != NULL,
                          "%s: %s does not say \"%s\":\n%s", label,
                          mode ? "check" : "verify", says[k], err);
        if (want == 2)
            ck_assert_msg(strstr(err, v) != NULL,
                          "%s: %s does not name the file %s:\n%s", label,
                          mode ? "check" : "verify", v, err);
        free(err);
    }
}

/* A fresh folder with the intact vector (v.json) and its candidate; the
 * control: both pass. */
typedef struct {
    char *dir, *cand;
    json_t *vec;
} fixture;

static void setup(fixture *f)
{
    f->dir = tu_tmpdir();
    f->vec = shipped();
    f->cand = put_candidate(f->dir, f->vec);
    char *v = put(f->dir, "v.json", f->vec, 0);
    expect_both(v, f->cand, 0, NULL, "the intact copy");
    unlink(v);
    free(v);
}

static void teardown(fixture *f)
{
    unlink(f->cand);
    free(f->cand);
    json_decref(f->vec);
    ck_assert_int_eq(rmdir(f->dir), 0);
    free(f->dir);
}

/* T1: an expected value changed, the hash left as it was. */
START_TEST(test_tamper_expected)
{
    fixture f;
    setup(&f);
    json_t *w = json_object_get(json_object_get(json_object_get(f.vec, "expected"),
                                                "final"), "w");
    json_array_set_new(w, 0, json_real(12345.0));
    char *v = put(f.dir, "v.json", f.vec, 0);
    static const char *const says[] = {
        "expected: the vector's expected changed since it was written",
        "hash.expected records", "golden/CHANGES.md", NULL};
    expect_both(v, f.cand, 2, says, "expected value");
    unlink(v);
    free(v);
    teardown(&f);
}
END_TEST

/* T2: a tolerance widened, the hash left as it was. */
START_TEST(test_tamper_tolerance)
{
    fixture f;
    setup(&f);
    json_object_set_new(json_object_get(f.vec, "tolerance"), "rtol",
                        json_real(1e300));
    char *v = put(f.dir, "v.json", f.vec, 0);
    static const char *const says[] = {
        "tolerance: the vector's tolerance changed since it was written",
        "hash.tolerance records", NULL};
    expect_both(v, f.cand, 2, says, "tolerance");
    unlink(v);
    free(v);
    teardown(&f);
}
END_TEST

/* T3: a flag changed (to another registered one), the hash left as it
 * was. */
START_TEST(test_tamper_flag)
{
    fixture f;
    setup(&f);
    json_array_set_new(json_object_get(f.vec, "flags"), 0,
                       json_string("prox-sign"));
    char *v = put(f.dir, "v.json", f.vec, 0);
    static const char *const says[] = {
        "flags: the vector's flags changed since it was written",
        "hash.flags records", NULL};
    expect_both(v, f.cand, 2, says, "flag");
    unlink(v);
    free(v);
    teardown(&f);
}
END_TEST

/* T4: two parts and the title changed: the first part is named and the
 * others listed; the title alone is caught by the whole-vector digest. */
START_TEST(test_tamper_several_and_title)
{
    fixture f;
    setup(&f);
    json_t *orig = json_deep_copy(f.vec);
    json_object_set_new(json_object_get(f.vec, "tolerance"), "atol",
                        json_real(1.0));
    json_object_set_new(json_object_get(f.vec, "provenance"), "kind",
                        json_string("self"));
    char *v = put(f.dir, "v.json", f.vec, 0);
    static const char *const both[] = {
        "tolerance: the vector's tolerance changed since it was written "
        "(and so did its provenance)", NULL};
    expect_both(v, f.cand, 2, both, "tolerance and provenance");
    unlink(v);
    free(v);
    json_object_set_new(orig, "title", json_string("another title"));
    v = put(f.dir, "v.json", orig, 0);
    static const char *const title[] = {
        "hash.vector: the vector changed since it was written, outside the "
        "parts hashed one by one (its format, id or title)", NULL};
    expect_both(v, f.cand, 2, title, "title");
    unlink(v);
    free(v);
    json_decref(orig);
    teardown(&f);
}
END_TEST

/* T5: a vector without its hash (and one with the old spec-only string
 * hash). */
START_TEST(test_tamper_no_hash)
{
    fixture f;
    setup(&f);
    json_t *h = json_incref(json_object_get(f.vec, "hash"));
    json_object_del(f.vec, "hash");
    char *v = put(f.dir, "v.json", f.vec, 0);
    static const char *const none[] = {
        "hash: the vector has no content hash", NULL};
    expect_both(v, f.cand, 2, none, "no hash");
    unlink(v);
    free(v);
    json_object_set(f.vec, "hash", json_object_get(h, "spec"));
    v = put(f.dir, "v.json", f.vec, 0);
    static const char *const old[] = {
        "hash: expected an object of digests {vector, spec, expected, "
        "tolerance, flags, provenance}", NULL};
    expect_both(v, f.cand, 2, old, "string hash");
    unlink(v);
    free(v);
    json_decref(h);
    teardown(&f);
}
END_TEST

/* T6: a tolerance above the fp64 ceiling (1e-10), hashed as a generator
 * would: refused naming the bound, whether the vector's or a quantity's;
 * accepted with an argument in tolerance.above_ceiling. */
START_TEST(test_tolerance_ceiling)
{
    fixture f;
    setup(&f);
    json_t *tol = json_object_get(f.vec, "tolerance");
    json_object_set_new(tol, "atol", json_real(1e-6));
    char *v = put(f.dir, "v.json", f.vec, 1);
    static const char *const atol[] = {
        "tolerance.atol: above the fp64 ceiling 1e-10", "above_ceiling",
        NULL};
    expect_both(v, f.cand, 2, atol, "atol above the ceiling");
    unlink(v);
    free(v);
    json_object_set_new(tol, "atol", json_real(1e-15));
    json_t *per = json_object(), *q = json_object();
    json_object_set_new(q, "atol", json_real(0.0));
    json_object_set_new(q, "rtol", json_real(2e-10));
    json_object_set_new(q, "basis", json_string("planted"));
    json_object_set_new(per, "w", q);
    json_object_set_new(tol, "per_quantity", per);
    v = put(f.dir, "v.json", f.vec, 1);
    static const char *const rtol[] = {
        "tolerance.per_quantity.w.rtol: above the fp64 ceiling", NULL};
    expect_both(v, f.cand, 2, rtol, "a quantity's rtol above the ceiling");
    unlink(v);
    free(v);
    json_object_set_new(tol, "above_ceiling",
                        json_string("planted by the test: 2e-10 is what a "
                                    "hypothetical iterative solve needs"));
    v = put(f.dir, "v.json", f.vec, 1);
    expect_both(v, f.cand, 0, NULL, "argued for");
    unlink(v);
    free(v);
    /* a relative tolerance of 1 accepts anything: refused even argued */
    json_object_set_new(q, "rtol", json_real(1.0));
    v = put(f.dir, "v.json", f.vec, 1);
    static const char *const one[] = {
        "tolerance.per_quantity.w.rtol: rtol = 1 accepts any value", NULL};
    expect_both(v, f.cand, 2, one, "rtol = 1");
    unlink(v);
    free(v);
    teardown(&f);
}
END_TEST

/* T7: a flag that no registry holds, hashed as a generator would: refused
 * with the built-in registry (no flags.json above the folder); accepted
 * once a flags.json beside the vector, or in a folder above it,
 * registers it; refused again when that registry is broken or not JSON. */
START_TEST(test_unregistered_flag)
{
    fixture f;
    setup(&f);
    json_array_append_new(json_object_get(f.vec, "flags"),
                          json_string("made-up-flag"));
    char *v = put(f.dir, "v.json", f.vec, 1);
    static const char *const builtin[] = {
        "flags[2]: flag \"made-up-flag\" is not registered in pflref's "
        "built-in registry", NULL};
    expect_both(v, f.cand, 2, builtin, "unregistered flag");
    /* a registry of the user's own, beside the vector */
    char *reg = tu_join(f.dir, "flags.json");
    const char *mine =
        "{\"format\": \"pflref-flags/1\", \"flags\": {"
        "\"aggregation-weights\": {}, \"local-step-count\": {},"
        " \"made-up-flag\": {}}}";
    ck_assert_int_eq(tu_write(reg, mine), 0);
    expect_both(v, f.cand, 0, NULL, "registered beside the vector");
    /* ... whose flags are then the only ones */
    ck_assert_int_eq(tu_write(reg, "{\"format\": \"pflref-flags/1\", "
                                   "\"flags\": {\"made-up-flag\": {}}}"), 0);
    const char *const local[] = {
        "flags[0]: flag \"aggregation-weights\" is not registered in", reg,
        NULL};
    expect_both(v, f.cand, 2, local, "the local registry rules");
    /* a broken registry is named */
    ck_assert_int_eq(tu_write(reg, "{\"format\": \"pflref-flags/1\"}"), 0);
    static const char *const broken[] = {
        "needs a \"flags\" object", NULL};
    expect_both(v, f.cand, 2, broken, "broken registry");
    ck_assert_int_eq(tu_write(reg, "{\"format\": "), 0);
    const char *const not_json[] = {reg, "line 1", NULL};
    expect_both(v, f.cand, 2, not_json, "registry not JSON");
    unlink(reg);
    /* a registry in the folder above */
    char *sub = tu_join(f.dir, "sub");
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    char *cand = put_candidate(sub, f.vec);
    char *v2 = put(sub, "v.json", f.vec, 1);
    ck_assert_int_eq(tu_write(reg, mine), 0);
    expect_both(v2, cand, 0, NULL, "registered in the folder above");
    unlink(reg);
    unlink(v2);
    unlink(cand);
    rmdir(sub);
    free(v2);
    free(cand);
    free(sub);
    free(reg);
    unlink(v);
    free(v);
    teardown(&f);
}
END_TEST

/* ---- the catalogue ------------------------------------------------------ */

/* ---- vectors in files (pflref freeze --arrays files) -------------------- */

/* A fresh folder with the shipped vector's spec frozen in files
 * (--inline-max 0: v.arrays/spec.init.w.npy, trajectory.npy, final.w.npy)
 * and a candidate, the reference's run of it; the control: both pass. */
typedef struct {
    char *dir, *v, *cand;
} files_fixture;

static void files_setup(files_fixture *f)
{
    f->dir = tu_tmpdir();
    json_t *vec = shipped();
    char *s = put(f->dir, "s.json", json_object_get(vec, "spec"), 0);
    json_decref(vec);
    f->v = tu_join(f->dir, "v.json");
    f->cand = tu_join(f->dir, "c.json");
    char args[4096];
    snprintf(args, sizeof args, "freeze %s -o %s --arrays files "
             "--inline-max 0", s, f->v);
    ck_assert_int_eq(tu_cli(args, NULL, NULL), 0);
    snprintf(args, sizeof args, "run %s -o %s", f->v, f->cand);
    ck_assert_int_eq(tu_cli(args, NULL, NULL), 0);
    expect_both(f->v, f->cand, 0, NULL, "the intact vector in files");
    free(s);
}

static void files_teardown(files_fixture *f)
{
    tu_remove_tree(f->dir);
    free(f->dir);
    free(f->v);
    free(f->cand);
}

/* The byte at offset 128 of dir/rel (the first number's lowest byte, past
 * the 128-byte header) xor'ed with 0x5a: a finite number still, another
 * one.  Twice: as it was. */
static void flip_byte(const char *dir, const char *rel)
{
    char *p = tu_join(dir, rel);
    FILE *fp = fopen(p, "r+b");
    ck_assert_msg(fp != NULL, "cannot open %s", p);
    ck_assert_int_eq(fseek(fp, 128, SEEK_SET), 0);
    const int c = fgetc(fp);
    ck_assert_int_ne(c, EOF);
    ck_assert_int_eq(fseek(fp, 128, SEEK_SET), 0);
    ck_assert_int_ne(fputc(c ^ 0x5a, fp), EOF);
    ck_assert_int_eq(fclose(fp), 0);
    free(p);
}

/* T8: one byte of a referenced file changed (of the expectation's
 * final.w, then of the spec's init.w): refused, naming the manifest's
 * entry, the file and the field that references it. */
START_TEST(test_tamper_array_file)
{
    files_fixture f;
    files_setup(&f);
    static const char *const final_w[] = {
        "array_files[", "v.arrays/final.w.npy (named by expected.final.w) "
        "has SHA-256", "the manifest says", NULL};
    flip_byte(f.dir, "v.arrays/final.w.npy");
    expect_both(f.v, f.cand, 2, final_w, "final.w.npy changed");
    flip_byte(f.dir, "v.arrays/final.w.npy");
    expect_both(f.v, f.cand, 0, NULL, "final.w.npy as it was");
    static const char *const init_w[] = {
        "v.arrays/spec.init.w.npy (named by spec.init.w) has SHA-256", NULL};
    flip_byte(f.dir, "v.arrays/spec.init.w.npy");
    expect_both(f.v, f.cand, 2, init_w, "spec.init.w.npy changed");
    files_teardown(&f);
}
END_TEST

/* T9: the manifest edited to agree with a changed file, the hash left as
 * it was: the content hash covers the manifest, so it covers the file;
 * and a hash without the manifest's digest. */
START_TEST(test_tamper_manifest)
{
    files_fixture f;
    files_setup(&f);
    flip_byte(f.dir, "v.arrays/trajectory.npy");
    char *tp = tu_join(f.dir, "v.arrays/trajectory.npy");
    char *bytes = tu_read(tp);
    struct stat sb;
    ck_assert_int_eq(stat(tp, &sb), 0);
    char hex[65];
    pflref_sha256_hex((const unsigned char *)bytes, (size_t)sb.st_size, hex);
    json_t *vec = json_load_file(f.v, 0, NULL);
    ck_assert_ptr_nonnull(vec);
    json_t *m = json_object_get(vec, "array_files");
    for (size_t j = 0; j < json_array_size(m); j++)
        if (strcmp(json_string_value(json_object_get(json_array_get(m, j),
                                                     "path")),
                   "v.arrays/trajectory.npy") == 0)
            json_object_set_new(json_array_get(m, j), "sha256",
                                json_string(hex));
    char *v = put(f.dir, "v.json", vec, 0);
    static const char *const edited[] = {
        "array_files: the vector's array_files changed since it was written",
        "hash.array_files records", NULL};
    expect_both(v, f.cand, 2, edited, "manifest edited");
    free(v);
    /* the manifest's digest taken out of the hash */
    flip_byte(f.dir, "v.arrays/trajectory.npy");
    json_decref(vec);
    vec = json_load_file(f.v, 0, NULL);
    ck_assert_ptr_nonnull(vec);
    char *text = json_dumps(vec, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    char *fixed = tu_vector_hashed(text, 1);   /* hashed again, then */
    json_decref(vec);
    vec = json_loads(fixed, 0, NULL);
    json_object_del(json_object_get(vec, "hash"), "array_files");
    v = put(f.dir, "v.json", vec, 0);
    static const char *const uncovered[] = {
        "hash.array_files: the vector has array_files, which its hash does "
        "not cover", NULL};
    expect_both(v, f.cand, 2, uncovered, "manifest not hashed");
    free(v);
    free(text);
    free(fixed);
    json_decref(vec);
    free(bytes);
    free(tp);
    files_teardown(&f);
}
END_TEST

static const tu_catalogue_row CLASSES[] = {
    {"T1", "vector: expected value edited", "test_tamper_expected"},
    {"T2", "vector: tolerance edited", "test_tamper_tolerance"},
    {"T3", "vector: flag edited", "test_tamper_flag"},
    {"T4", "vector: several parts or the title edited",
     "test_tamper_several_and_title"},
    {"T5", "vector without its content hash", "test_tamper_no_hash"},
    {"T6", "tolerance above the fp64 ceiling", "test_tolerance_ceiling"},
    {"T7", "flag not in the registry", "test_unregistered_flag"},
    {"T8", "vector in files: a referenced file changed",
     "test_tamper_array_file"},
    {"T9", "vector in files: its manifest edited", "test_tamper_manifest"},
};

/* docs/bad-inputs.md has a row "| Tn | class | ... | test |" for every
 * class here, and no row beyond the last. */
START_TEST(test_tamper_catalogue)
{
    tu_assert_catalogue(CLASSES, sizeof CLASSES / sizeof CLASSES[0], 'T');
}
END_TEST

Suite *tamper_suite(void)
{
    Suite *s = suite_create("tamper");
    TCase *tc = tcase_create("tamper");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_tamper_expected);
    tcase_add_test(tc, test_tamper_tolerance);
    tcase_add_test(tc, test_tamper_flag);
    tcase_add_test(tc, test_tamper_several_and_title);
    tcase_add_test(tc, test_tamper_no_hash);
    tcase_add_test(tc, test_tolerance_ceiling);
    tcase_add_test(tc, test_unregistered_flag);
    tcase_add_test(tc, test_tamper_array_file);
    tcase_add_test(tc, test_tamper_manifest);
    tcase_add_test(tc, test_tamper_catalogue);
    suite_add_tcase(s, tc);
    return s;
}
