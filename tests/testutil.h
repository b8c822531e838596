/* SPDX-License-Identifier: GPL-3.0-or-later */
/* tests/testutil.h: helpers shared by the test files. */
#ifndef PFLREF_TESTUTIL_H
#define PFLREF_TESTUTIL_H

#include <stddef.h>
#include "pflref.h"

/* A path under the repository (PFLREF_ROOT), malloc'd. */
char *tu_repo_path(const char *rel);

/* Run the pflref CLI (PFLREF_CLI) with the given argument string (shell
 * syntax) and return its exit status; *out and *errout (if non-NULL) get
 * its standard output and error (malloc'd). */
int tu_cli(const char *args, char **out, char **errout);

/* How tu_cli_with runs the program; a field 0 or NULL is tu_cli's way. */
typedef struct {
    const char *cwd;     /* the folder it runs in (NULL: the current one)  */
    const char *prefix;  /* shell words before it, e.g. "ulimit -f 2 &&"
                            (NULL: none)                                  */
    int hang_seconds;    /* > 0: run under timeout(1), killed (SIGKILL)
                            after this many seconds                       */
    int repo;            /* 1: each "$R" of args is the repository
                            (PFLREF_ROOT)                                 */
} tu_cli_options;
/* tu_cli with opt (NULL: tu_cli itself): the shell runs
 * `[cd CWD &&] [PREFIX] [timeout -s KILL S] $PFLREF_CLI ARGS`; its
 * standard output and error are captured (a failed check when they
 * cannot be). */
int tu_cli_with(const tu_cli_options *opt, const char *args, char **out,
                char **errout);

/* A fresh temporary folder (malloc'd path). */
char *tu_tmpdir(void);
/* Remove dir and everything in it (links are removed, not followed). */
void tu_remove_tree(const char *dir);
/* dir/name (malloc'd). */
char *tu_join(const char *dir, const char *name);
/* The number of entries in dir (. and .. excluded). */
int tu_entries(const char *dir);
/* The tree below dir as one string (malloc'd, NUL-terminated; *len, when
 * len is not NULL, gets its length, regular files' bytes included): per
 * entry, sorted, links not followed, its path relative to dir, its kind,
 * inode and permission bits, a link's target and a regular file's bytes.
 * Equal strings: nothing below dir was created, removed, replaced (a FIFO
 * is still that FIFO) or changed. */
char *tu_tree(const char *dir, size_t *len);

/* Case q of a table of bad specs: write spec to DIR/sQ.json, run it with
 * `pflref run`, and assert exit 2, a message on stderr that names `where`,
 * and no result file (DIR/rQ.json). */
void tu_cli_refuses(const char *dir, size_t q, const char *spec,
                    const char *where);

/* `pflref ARGS` as tu_cli, each "$D" of fmt replaced by dir, quoted. */
int tu_cli_in(const char *dir, const char *fmt, char **out, char **errout);

/* dir/name parsed as JSON (a failed check when it is not), or written
 * (compact, members in order, 17 significant digits). */
struct json_t *tu_json_load_in(const char *dir, const char *name);
void tu_json_save_in(const char *dir, const char *name,
                     const struct json_t *v);

/* The result dir/name made a failing candidate: x ← x + ½ for the first
 * number of final.v (else final.w), x ← x (1 + 2⁻²⁰) for that of the
 * first trajectory record. */
void tu_result_perturb(const char *dir, const char *name);

/* A check report (`check --json`) without its file names (each vector's
 * "expected", "candidate" and "replay"), for comparing the reports of two
 * forms of one document (malloc'd). */
char *tu_report_without_paths(const char *text);

/* Write text to path; returns 0 on success. */
int tu_write(const char *path, const char *text);

/* Read a whole file (malloc'd) or NULL. */
char *tu_read(const char *path);

/* 1 when path exists. */
int tu_exists(const char *path);

/* Parse a spec from a string; returns the status and fills err. */
pflref_status tu_parse(const char *text, pflref_spec **spec, pflref_error *err);

/* Parse a spec that must be valid (the test fails with the reader's
 * message otherwise); free with pflref_spec_free. */
pflref_spec *tu_spec(const char *text);

/* Run a spec that must succeed (trace may be NULL); free the result with
 * pflref_run_result_free. */
pflref_run_result *tu_run(const pflref_spec *spec, const pflref_trace *trace);

/* Run a spec that must fail with `expected` and hand back no result; *err
 * gets the error. */
void tu_run_error(const pflref_spec *spec, pflref_status expected,
                  pflref_error *err);

/* fwd and rev are runs of one problem with its clients listed in opposite
 * orders: the global models agree to relative w_rtol (the aggregation sums
 * in another order) and client i of fwd has the personal model of client
 * N−1−i of rev, to absolute v_atol. */
void tu_assert_relabelled(const pflref_run_result *fwd,
                          const pflref_run_result *rev, double w_rtol,
                          double v_atol);

/* Run a golden vector file (path relative to the repository) and return
 * its report; fails the test on a malformed vector. */
void tu_golden(const char *rel, pflref_golden_report *rep);
/* Verify the golden vector at repo-relative path rel and assert that it
 * compared something and that every number matched (the message names the
 * first divergence: event, name, round, client, step, entry). */
void tu_assert_golden(const char *rel);

/* A golden vector's text with its "hash" {vector, spec, expected,
 * tolerance, flags, provenance, and trajectory_values and array_files when
 * it has them} computed by ref/io/canonical.c (malloc'd):
 * for tests that write vectors by hand or edit one on purpose.  With
 * replace = 0 a text that already has a "hash" (or is not a JSON object of
 * format pflref-golden/1) comes back unchanged; with replace = 1 a "hash"
 * is recomputed. */
char *tu_vector_hashed(const char *text, int replace);

/* One class of docs/bad-inputs.md's lettered tables ("F1", "T3", ...):
 * its number, its class as the table words it, and the test that covers
 * it. */
typedef struct {
    const char *no, *name, *test;
} tu_catalogue_row;

/* docs/bad-inputs.md has a row "| no | name | ... `test` ... |" for each
 * of the n rows, and no row numbered <letter>(n + 1). */
void tu_assert_catalogue(const tu_catalogue_row *rows, size_t n, char letter);
/* The same, with no row numbered <letter>(last + 1): a series whose
 * numbers skip some (kept for rows written elsewhere) ends at last. */
void tu_assert_catalogue_to(const tu_catalogue_row *rows, size_t n,
                            char letter, size_t last);

#endif
