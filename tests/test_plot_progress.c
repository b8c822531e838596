/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/test_plot_progress.c: the progress line of run, verify and check
 * (cli/progress.c).  Under a pseudo-terminal (script(1) of util-linux,
 * Debian's essential bsdutils) the line appears, updates with "\r" and is
 * erased at the end; with --quiet, and whenever standard error is a pipe
 * or a file, nothing is printed; the result is the same bytes either way. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "suites.h"
#include "testutil.h"

/* Run pflref with args under a pseudo-terminal: what the terminal showed
 * (standard output and error together; malloc'd).  *rc: the exit code. */
static char *under_pty(const char *args, int *rc)
{
    const char *cli = getenv("PFLREF_CLI");
    ck_assert_ptr_nonnull(cli);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "script -qec '%s %s' /dev/null </dev/null",
             cli, args);
    FILE *f = popen(cmd, "r");
    ck_assert_msg(f != NULL, "cannot run script(1)");
    size_t cap = 1 << 16, n = 0;
    char *out = malloc(cap);
    ck_assert_ptr_nonnull(out);
    for (size_t k; (k = fread(out + n, 1, cap - n - 1, f)) > 0;) {
        n += k;
        if (n + 1 == cap) {
            cap *= 2;
            out = realloc(out, cap);
            ck_assert_ptr_nonnull(out);
        }
    }
    out[n] = '\0';
    int st = pclose(f);
    ck_assert_msg(WIFEXITED(st), "script(1) did not exit");
    *rc = WEXITSTATUS(st);
    return out;
}

/* The number of times needle occurs in s. */
static int count(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(s, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* run on a terminal: "round t of 400, k clients done", then erased; the
 * result equals the one written with standard error in a pipe. */
START_TEST(test_run_progress_on_terminal)
{
    char *dir = tu_tmpdir(), *spec = tu_repo_path("golden/seed000/fedavg-ft.json");
    char args[2048], path[600];
    int rc;
    snprintf(args, sizeof args, "run %s -o %s/tty.json", spec, dir);
    char *shown = under_pty(args, &rc);
    ck_assert_int_eq(rc, 0);
    ck_assert_msg(strstr(shown, "\r\033[Kpflref run: round 1 of 400, ") != NULL,
                  "no progress line: '%s'", shown);
    ck_assert_msg(strstr(shown, " clients done, ") != NULL &&
                      strstr(shown, " s elapsed") != NULL, "%s", shown);
    size_t n = strlen(shown);
    ck_assert_msg(n >= 4 && strcmp(shown + n - 4, "\r\033[K") == 0,
                  "the line is not erased at the end: '%s'", shown);
    free(shown);
    /* the same spec with standard error a pipe: not a byte on it */
    char *out, *err;
    snprintf(args, sizeof args, "run %s -o %s/pipe.json", spec, dir);
    ck_assert_int_eq(tu_cli(args, &out, &err), 0);
    ck_assert_msg(err[0] == '\0' && out[0] == '\0', "printed: '%s' '%s'", out,
                  err);
    free(out);
    free(err);
    snprintf(path, sizeof path, "%s/tty.json", dir);
    char *a = tu_read(path);
    snprintf(path, sizeof path, "%s/pipe.json", dir);
    char *b = tu_read(path);
    ck_assert_msg(a != NULL && b != NULL && strcmp(a, b) == 0,
                  "the result depends on the terminal");
    free(a);
    free(b);
    /* --quiet on a terminal: nothing */
    snprintf(args, sizeof args, "run --quiet %s -o %s/quiet.json", spec, dir);
    shown = under_pty(args, &rc);
    ck_assert_int_eq(rc, 0);
    ck_assert_msg(shown[0] == '\0', "--quiet printed '%s'", shown);
    free(shown);
    /* --trace on a terminal: the trace, no progress line */
    snprintf(args, sizeof args, "run --trace %s -o %s/trace.json", spec, dir);
    shown = under_pty(args, &rc);
    ck_assert_int_eq(rc, 0);
    ck_assert_msg(strstr(shown, "round 0: w = ") != NULL &&
                      strstr(shown, "pflref run: round") == NULL,
                  "trace and progress mixed");
    free(shown);
    free(spec);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

/* verify and check over files on a terminal: "file k of n", erased before
 * the summary; nothing on a pipe.  (A terminal shows "\n" as "\r\n", so
 * the progress line's mark is its erase sequence, ESC [ K.) */
START_TEST(test_verify_check_progress)
{
    char *dir = tu_tmpdir(), *fed = tu_repo_path("golden/fedavg");
    char *vec = tu_repo_path("golden/fedavg/worked-samples.json");
    char args[2048];
    int rc;
    snprintf(args, sizeof args, "verify %s", fed);
    char *shown = under_pty(args, &rc);
    ck_assert_int_eq(rc, 0);
    ck_assert_msg(strstr(shown, "\r\033[Kpflref verify: file 1 of ") != NULL,
                  "no progress line: '%s'", shown);
    const char *summary = strstr(shown, "verify: ");
    while (summary != NULL && summary > shown && summary[-1] == ' ')
        summary = strstr(summary + 1, "verify: ");
    ck_assert_msg(summary != NULL && summary >= shown + 3 &&
                      memcmp(summary - 3, "\033[K", 3) == 0,
                  "the summary does not follow an erased line: '%s'", shown);
    free(shown);
    char *out, *err;
    ck_assert_int_eq(tu_cli(args, &out, &err), 0);
    ck_assert_msg(err[0] == '\0' && count(out, "\r") == 0, "'%s' '%s'", out,
                  err);
    free(out);
    free(err);
    snprintf(args, sizeof args, "verify -q %s", fed);
    shown = under_pty(args, &rc);
    ck_assert_msg(rc == 0 && strstr(shown, "\033[K") == NULL, "-q: '%s'", shown);
    free(shown);
    snprintf(args, sizeof args, "run %s -o %s/c.json", vec, dir);
    ck_assert_int_eq(tu_cli(args, NULL, NULL), 0);
    snprintf(args, sizeof args, "check %s %s/c.json", vec, dir);
    shown = under_pty(args, &rc);
    ck_assert_int_eq(rc, 0);
    ck_assert_msg(strstr(shown, "\r\033[Kpflref check: file 1 of 1") != NULL,
                  "no progress line: '%s'", shown);
    free(shown);
    snprintf(args, sizeof args, "check --quiet %s %s/c.json", vec, dir);
    shown = under_pty(args, &rc);
    ck_assert_msg(rc == 0 && strstr(shown, "\033[K") == NULL, "--quiet: '%s'",
                  shown);
    free(shown);
    ck_assert_int_eq(tu_cli(args, &out, &err), 0);
    ck_assert_msg(err[0] == '\0', "'%s'", err);
    free(out);
    free(err);
    free(fed);
    free(vec);
    tu_remove_tree(dir);
    free(dir);
}
END_TEST

Suite *progress_suite(void)
{
    Suite *s = suite_create("progress");
    TCase *tc = tcase_create("progress");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_run_progress_on_terminal);
    tcase_add_test(tc, test_verify_check_progress);
    suite_add_tcase(s, tc);
    return s;
}
