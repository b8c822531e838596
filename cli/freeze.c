/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cli/freeze.c: pflref freeze SPEC -o VECTOR [--atol A --rtol R --basis
 * TEXT] [--id ID] [--trajectory step|round|none] [--arrays inline|files
 * [--inline-max N]] (docs/cli.md): a golden vector of the reference's own
 * output on the spec (pflref_freeze_text; with --arrays files
 * pflref_freeze_write, which puts its large arrays in .npy files of
 * STEM.arrays/ beside the vector; ref/io/freeze.c).
 *
 * Glue only: arguments, reading the spec, writing the vector atomically
 * (nothing is left behind on failure) or to standard output (-o -, -o
 * /dev/stdout; not with --arrays files), exit codes (2: usage or invalid
 * input, 3: the run diverged).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

/* The arguments of freeze. */
typedef struct {
    const char *spec, *out;
    const char *atol_s, *rtol_s, *inline_max_s;
    pflref_freeze_options opt;
} freeze_args;

/* A tolerance bound: a finite decimal number, the whole argument. */
static int parse_bound(const char *name, const char *s, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(*out))
        return cli_usage_error(strcmp(name, "--atol") == 0
                                   ? "--atol takes a number"
                                   : "--rtol takes a number", s);
    return EXIT_OK;
}

/* --inline-max: a decimal integer >= 0, the whole argument. */
static int parse_inline_max(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    const unsigned long long n = strtoull(s, &end, 10);
    if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno == ERANGE ||
        n > (unsigned long long)SIZE_MAX)
        return cli_usage_error("--inline-max takes an integer >= 0 (the "
                               "most numbers an array keeps inline)", s);
    *out = (size_t)n;
    return EXIT_OK;
}

/* --arrays and --inline-max: files go beside a vector file, so not with
 * standard output; --inline-max only with files. */
static int check_arrays(freeze_args *a)
{
    const char *form = a->opt.arrays;
    if (form != NULL && strcmp(form, "inline") != 0 &&
        strcmp(form, "files") != 0)
        return cli_usage_error("--arrays is inline or files", form);
    const int files = form != NULL && strcmp(form, "files") == 0;
    if (a->inline_max_s != NULL && !files)
        return cli_usage_error("--inline-max goes with --arrays files",
                               a->inline_max_s);
    if (files && cli_is_stdout(a->out))
        return cli_usage_error("--arrays files writes .npy files beside the "
                               "vector: give -o VECTOR.json, not standard "
                               "output", a->out);
    a->opt.inline_max = PFLREF_FREEZE_INLINE_MAX;
    return a->inline_max_s != NULL
               ? parse_inline_max(a->inline_max_s, &a->opt.inline_max)
               : EXIT_OK;
}

static int parse_args(int argc, char **argv, freeze_args *a)
{
    static const char *const WITH_VALUE[] = {"-o", "--atol", "--rtol",
                                             "--basis", "--id",
                                             "--trajectory", "--arrays",
                                             "--inline-max", NULL};
    for (int i = 0; i < argc; i++) {
        int known = -1;
        for (int k = 0; WITH_VALUE[k] != NULL; k++)
            if (strcmp(argv[i], WITH_VALUE[k]) == 0)
                known = k;
        if (known >= 0 && i + 1 >= argc)
            return cli_usage_error("the option needs a value", argv[i]);
        const char *v = known >= 0 ? argv[++i] : NULL;
        switch (known) {
        case 0: a->out = v; break;
        case 1: a->atol_s = v; break;
        case 2: a->rtol_s = v; break;
        case 3: a->opt.basis = v; break;
        case 4: a->opt.id = v; break;
        case 5: a->opt.trajectory = v; break;
        case 6: a->opt.arrays = v; break;
        case 7: a->inline_max_s = v; break;
        default:
            if (argv[i][0] == '-' && argv[i][1] != '\0')
                return cli_usage_error("unknown option", argv[i]);
            if (a->spec != NULL)
                return cli_usage_error("freeze takes one spec", argv[i]);
            a->spec = argv[i];
        }
    }
    if (a->spec == NULL)
        return cli_usage_error("freeze needs a spec file", NULL);
    if (a->out == NULL)
        return cli_usage_error("freeze needs -o VECTOR.json", NULL);
    /* a tolerance is stated whole, with its reason, or not at all */
    const int n_tol = (a->atol_s != NULL) + (a->rtol_s != NULL) +
                      (a->opt.basis != NULL);
    if (n_tol != 0 && n_tol != 3)
        return cli_usage_error("--atol, --rtol and --basis go together (a "
                               "tolerance and why it is what it is); "
                               "without them the fp64 default applies",
                               NULL);
    int rc = check_arrays(a);
    if (rc == EXIT_OK && a->atol_s != NULL &&
        (rc = parse_bound("--atol", a->atol_s, &a->opt.atol)) == EXIT_OK)
        rc = parse_bound("--rtol", a->rtol_s, &a->opt.rtol);
    return rc;
}

/* The library names an option "opt.atol"; on the command line it is
 * "--atol". */
static int fail(pflref_error *err, const char *spec)
{
    if (strncmp(err->where, "opt.", 4) == 0 &&
        strcmp(err->where, "opt.vector_dir") != 0) {
        char opt[sizeof err->where];
        snprintf(opt, sizeof opt, "--%s", err->where + 4);
        snprintf(err->where, sizeof err->where, "%s", opt);
    }
    return cli_fail(err, spec);
}

int cli_freeze(int argc, char **argv)
{
    freeze_args a = {.spec = NULL, .out = NULL, .atol_s = NULL,
                     .rtol_s = NULL, .inline_max_s = NULL,
                     .opt = {.atol = 0.0, .rtol = 0.0}};
    int rc = parse_args(argc, argv, &a);
    if (rc != EXIT_OK)
        return rc;
    pflref_error err;
    pflref_error_clear(&err);
    char *text, *vector = NULL;
    size_t len, vlen;
    pflref_file_id spec_id;
    if (pflref_read_file_id(a.spec, &text, &len, &spec_id, &err) != PFLREF_OK)
        return cli_fail(&err, a.spec);
    char dir[PFLREF_PATH_MAX], out_dir[PFLREF_PATH_MAX] = ".";
    pflref_file_folder(a.spec, dir, sizeof dir);
    /* on standard output the vector's relative paths are the current
     * folder's (where a `> FILE` of the shell puts it) */
    const int to_stdout = cli_is_stdout(a.out);
    if (!to_stdout)
        pflref_file_folder(a.out, out_dir, sizeof out_dir);
    rc = cli_output_is_input(a.out, "vector", a.spec, &spec_id, text, len,
                             dir);
    if (rc == EXIT_OK && cli_check_output(a.out, &err) != PFLREF_OK)
        rc = fail(&err, a.spec);   /* refused before the run */
    if (rc != EXIT_OK) {
        free(text);
        return rc;
    }
    a.opt.vector_dir = out_dir;
    pflref_status st;
    if (!to_stdout) {
        /* the files (--arrays files), then the vector, each through the
         * one writer; an earlier vector's files it no longer lists go */
        st = pflref_freeze_write(text, len, dir, &a.opt, a.out, &vlen, &err);
    } else {
        st = pflref_freeze_text(text, len, dir, &a.opt, &vector, &vlen, &err);
        if (st == PFLREF_OK)
            st = cli_write_text(a.out, vector, "", &err);
    }
    free(text);
    free(vector);
    if (st != PFLREF_OK)
        return fail(&err, a.spec);
    fprintf(stderr, "pflref: froze %s into %s (%zu bytes)\n", a.spec,
            to_stdout ? "standard output" : a.out, vlen);
    return EXIT_OK;
}
