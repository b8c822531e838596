/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_version.c: one version number (include/pflref/version.h) and
 * everything that reports it agrees: pflref_version(), `pflref --version`,
 * the shared library's file name and soname (libpflref.so.VERSION,
 * libpflref.so.MAJOR), the pkg-config file (Version:), the man page's
 * title line, and CHANGELOG.md's statement of it.  The build products are
 * found in the release build folder, where the Makefile puts
 * them (PFLREF_PRODUCTS); the Python package's __version__ is compared in
 * make check-install. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "testutil.h"

/* The folder that holds the shared library, pflref.pc and man/: the
 * release build (PFLREF_PRODUCTS, set by the Makefile for every flavour),
 * else the folder of the pflref program (malloc'd). */
static char *build_dir(void)
{
    const char *products = getenv("PFLREF_PRODUCTS");
    if (products != NULL && products[0] != '\0') {
        char *d = strdup(products);
        ck_assert_ptr_nonnull(d);
        return d;
    }
    const char *cli = getenv("PFLREF_CLI");
    ck_assert_msg(cli != NULL, "PFLREF_CLI is not set (run through make)");
    char *d = strdup(cli);
    ck_assert_ptr_nonnull(d);
    char *slash = strrchr(d, '/');
    if (slash == NULL)
        strcpy(d, ".");
    else
        *slash = '\0';
    return d;
}

/* The standard output of a shell command (malloc'd, NUL-terminated). */
static char *capture(const char *cmd)
{
    FILE *p = popen(cmd, "r");
    ck_assert_msg(p != NULL, "cannot run %s", cmd);
    char *buf = calloc(1, 8192);
    ck_assert_ptr_nonnull(buf);
    size_t n = fread(buf, 1, 8191, p);
    buf[n] = '\0';
    pclose(p);
    return buf;
}

START_TEST(test_version_function)
{
    ck_assert_str_eq(pflref_version(), PFLREF_VERSION);
    pflref_build_info bi;
    pflref_build_info_get(&bi);
    ck_assert_str_eq(bi.version, PFLREF_VERSION);
    /* MAJOR.MINOR.PATCH, digits only */
    unsigned a, b, c;
    char tail;
    ck_assert_int_eq(sscanf(PFLREF_VERSION, "%u.%u.%u%c", &a, &b, &c, &tail),
                     3);
}
END_TEST

START_TEST(test_version_cli)
{
    char *out;
    ck_assert_int_eq(tu_cli("--version", &out, NULL), 0);
    char want[64];
    snprintf(want, sizeof want, "pflref %s (", PFLREF_VERSION);
    ck_assert_msg(strncmp(out, want, strlen(want)) == 0, "%s", out);
    free(out);
}
END_TEST

START_TEST(test_version_library_and_pc)
{
    char *dir = build_dir();
    char cmd[2048], major[16];
    snprintf(major, sizeof major, "%s", PFLREF_VERSION);
    *strchr(major, '.') = '\0';
    snprintf(cmd, sizeof cmd,
             "readelf -d '%s/libpflref.so.%s' | sed -n 's/.*SONAME.*\\[\\(.*\\)\\]/\\1/p'",
             dir, PFLREF_VERSION);
    char *soname = capture(cmd);
    char want[64];
    snprintf(want, sizeof want, "libpflref.so.%s\n", major);
    ck_assert_str_eq(soname, want);
    free(soname);
    snprintf(cmd, sizeof cmd, "sed -n 's/^Version: //p' '%s/pflref.pc'", dir);
    char *pc = capture(cmd);
    snprintf(want, sizeof want, "%s\n", PFLREF_VERSION);
    ck_assert_str_eq(pc, want);
    free(pc);
    /* .TH PFLREF 1 DATE "pflref VERSION" */
    snprintf(cmd, sizeof cmd, "sed -n 's/^\\.TH .*\"pflref \\([^\"]*\\)\".*/\\1/p' "
                              "'%s/man/pflref.1'", dir);
    char *man = capture(cmd);
    ck_assert_str_eq(man, want);
    free(man);
    free(dir);
}
END_TEST

/* CHANGELOG.md states this tree's version ("Version of this tree:
 * **X.Y.Z**"), and its latest release heading ("## [X.Y.Z] - date"), when
 * there is one, is not newer: one number, written in version.h. */
START_TEST(test_version_changelog)
{
    char *path = tu_repo_path("CHANGELOG.md");
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "sed -n 's/.*Version of this tree: \\*\\*\\([^*]*\\)\\*\\*.*/\\1/p' '%s'",
             path);
    char *got = capture(cmd);
    char want[64];
    snprintf(want, sizeof want, "%s\n", PFLREF_VERSION);
    ck_assert_str_eq(got, want);
    free(got);
    snprintf(cmd, sizeof cmd,
             "grep -m1 '^## \\[[0-9]' '%s' | sed 's/^## \\[\\([^]]*\\)\\].*/\\1/'",
             path);
    char *release = capture(cmd);
    unsigned r[3] = {0, 0, 0}, v[3];
    ck_assert_int_eq(sscanf(PFLREF_VERSION, "%u.%u.%u", &v[0], &v[1], &v[2]),
                     3);
    if (release[0] != '\0') {
        ck_assert_int_eq(sscanf(release, "%u.%u.%u", &r[0], &r[1], &r[2]), 3);
        ck_assert_msg(r[0] < v[0] || (r[0] == v[0] && (r[1] < v[1] ||
                      (r[1] == v[1] && r[2] <= v[2]))),
                      "CHANGELOG.md's latest release %s is newer than %s",
                      release, PFLREF_VERSION);
    }
    free(release);
    free(path);
}
END_TEST

Suite *version_suite(void)
{
    Suite *s = suite_create("version");
    TCase *tc = tcase_create("version");
    tcase_add_test(tc, test_version_function);
    tcase_add_test(tc, test_version_cli);
    tcase_add_test(tc, test_version_library_and_pc);
    tcase_add_test(tc, test_version_changelog);
    suite_add_tcase(s, tc);
    return s;
}
