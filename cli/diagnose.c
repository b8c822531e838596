/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cli/diagnose.c: pflref diagnose VECTOR CANDIDATE [options], and the
 * diagnosis `pflref check --diagnose` prints for a failing vector
 * (pflref_golden_diagnose; docs/cli.md, "diagnose").
 *
 * On a terminal (isatty(stderr)) and without --quiet a progress line
 * counts the variant runs against the budget (cli/progress.c).
 *
 * Exit codes: 0 a variant matches completely (the vector's own spec
 * included), 1 no variant matches (the nearest is named), 2 usage or
 * malformed input, 5 an internal error.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

/* "1. preset official, pfedme.weights = samples (instead of uniform)
 * (switch): agrees on 12 of 40 records, 3 mismatched" */
static void print_match(size_t rank, const pflref_variant_match *m)
{
    printf("  %zu. preset %s%s%s (%s): ", rank, m->preset,
           m->change[0] ? ", " : "", m->change, m->kind);
    if (m->complete)
        printf("matches all %zu records (%.1f digits)\n", m->expected_records,
               m->min_lre);
    else if (m->compared < m->expected_records)
        printf("agrees on %zu of the %zu records the candidate wrote (%zu "
               "expected), %zu mismatched\n", m->agreeing, m->compared,
               m->expected_records, m->mismatches);
    else
        printf("agrees on %zu of %zu records, %zu mismatched\n", m->agreeing,
               m->expected_records, m->mismatches);
    if (m->value_source[0] != '\0')
        printf("     from: %s\n", m->value_source);
    if (m->identical[0] != '\0')
        printf("     identical here: %s\n", m->identical);
}

void cli_print_diagnosis(const pflref_diagnosis *d, int ranked)
{
    printf("DIAGNOSIS %s: %s\n", d->id, d->summary);
    if (!ranked)
        return;
    for (size_t i = 0; i < d->n_best; i++)
        print_match(i + 1, &d->best[i]);
    printf("  %zu runs (%zu refused, %zu changed nothing on this vector)%s\n",
           d->runs, d->refused, d->unchanged,
           d->budget_exhausted ? ", budget exhausted" : "");
}

/* --budget N: 0, or a usage error (printed). */
int cli_parse_budget(const char *arg, size_t *budget)
{
    char *end;
    errno = 0;
    unsigned long long n = strtoull(arg, &end, 10);
    if (arg[0] < '0' || arg[0] > '9' || *end != '\0' || errno != 0 ||
        n < 1 || n > 10000)
        return cli_usage_error("--budget is a count of runs from 1 to 10000",
                               arg);
    *budget = (size_t)n;
    return EXIT_OK;
}

/* The progress line's callback (pflref_diagnose_options.progress): "run k
 * of the budget" -- the search may stop before, at a complete match. */
static void on_progress(void *ctx, size_t runs, size_t budget)
{
    cli_progress_item(ctx, "variant run", runs, budget);
}

typedef struct {
    const char *vector, *candidate;
    int json;
    pflref_diagnose_options opt;
} diagnose_args;

static int parse(int argc, char **argv, diagnose_args *a)
{
    *a = (diagnose_args){.opt = {.check = {.same_id = 1}}};
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
        int rc = EXIT_OK;
        if (strcmp(s, "--json") == 0)
            a->json = 1;
        else if (strcmp(s, "--partial") == 0)
            a->opt.check.partial = 1;
        else if (strcmp(s, "--budget") == 0 && i + 1 < argc)
            rc = cli_parse_budget(argv[++i], &a->opt.budget);
        else if (strcmp(s, "--candidate-precision") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            if (cli_parse_precision(v, &a->opt.check.precision) != 0)
                rc = cli_usage_error(CLI_PRECISION_USAGE, v);
        } else if (s[0] == '-' && s[1] != '\0')
            rc = cli_usage_error("unknown option or missing value", s);
        else if (a->vector == NULL)
            a->vector = s;
        else if (a->candidate == NULL)
            a->candidate = s;
        else
            rc = cli_usage_error("diagnose takes VECTOR and CANDIDATE", s);
        if (rc != EXIT_OK)
            return rc;
    }
    if (a->candidate == NULL)
        return cli_usage_error("diagnose needs VECTOR and CANDIDATE", NULL);
    return EXIT_OK;
}

/* Read both files and diagnose: EXIT_OK with *d filled, or the error
 * printed and its exit code. */
static int run(const diagnose_args *a, pflref_diagnosis *d)
{
    char *vtext = NULL, *ctext = NULL;
    size_t vlen = 0, clen = 0;
    pflref_error err;
    pflref_error_clear(&err);
    if (pflref_read_file(a->vector, &vtext, &vlen, &err) != PFLREF_OK)
        return cli_fail(&err, a->vector);
    if (pflref_read_file(a->candidate, &ctext, &clen, &err) != PFLREF_OK) {
        free(vtext);
        return cli_fail(&err, a->candidate);
    }
    char dir[PFLREF_PATH_MAX], cdir[PFLREF_PATH_MAX];
    pflref_file_folder(a->vector, dir, sizeof dir);
    pflref_file_folder(a->candidate, cdir, sizeof cdir);
    pflref_status st = pflref_golden_diagnose_at(vtext, vlen, dir, ctext,
                                                 clen, cdir, &a->opt, d,
                                                 &err);
    free(vtext);
    free(ctext);
    if (st != PFLREF_OK)
        return cli_fail(&err, strncmp(err.where, "candidate:", 10) == 0
                                  ? a->candidate : a->vector);
    return EXIT_OK;
}

int cli_diagnose(int argc, char **argv)
{
    diagnose_args a;
    cli_progress prog;
    const int quiet = cli_progress_take_quiet(&argc, argv);
    int rc = parse(argc, argv, &a);
    if (rc != EXIT_OK)
        return rc;
    cli_progress_start(&prog, "diagnose", 0, quiet);
    a.opt.progress = on_progress;
    a.opt.progress_ctx = &prog;
    pflref_diagnosis *d = malloc(sizeof *d);
    if (d == NULL) {
        fprintf(stderr, "pflref: diagnose: out of memory\n");
        return EXIT_INTERNAL;
    }
    rc = run(&a, d);
    cli_progress_end(&prog);
    if (rc == EXIT_OK && a.json) {
        char *text = NULL;
        pflref_error err;
        if (pflref_diagnosis_json(d, &text, &err) != PFLREF_OK)
            rc = cli_fail(&err, "diagnose");
        else
            printf("%s\n", text);
        free(text);
    } else if (rc == EXIT_OK)
        cli_print_diagnosis(d, 1);
    if (rc == EXIT_OK)
        rc = d->matched ? EXIT_OK : EXIT_MISMATCH;
    free(d);
    return rc;
}

json_t *cli_diagnose_pair(const char *vtext, size_t vlen, const char *dir,
                          const char *ctext, size_t clen, const char *cdir,
                          const pflref_check_options *cmp, size_t budget,
                          int print)
{
    pflref_diagnosis *d = malloc(sizeof *d);
    pflref_error err;
    pflref_error_clear(&err);
    cli_progress prog;
    cli_progress_start(&prog, "check --diagnose", 0, 0);
    const pflref_diagnose_options opt = {.check = *cmp, .budget = budget,
                                         .progress = on_progress,
                                         .progress_ctx = &prog};
    json_t *out = NULL;
    pflref_status st = d == NULL ? PFLREF_ENOMEM
                                 : pflref_golden_diagnose_at(vtext, vlen,
                                                             dir, ctext, clen,
                                                             cdir, &opt, d,
                                                             &err);
    cli_progress_end(&prog);
    if (st == PFLREF_OK) {
        char *text = NULL;
        if (print)
            cli_print_diagnosis(d, 0);
        else if (pflref_diagnosis_json(d, &text, &err) == PFLREF_OK)
            out = json_loads(text, 0, NULL);
        free(text);
    } else if (print)
        printf("  diagnosis failed: %s: %s\n", err.where, err.message);
    free(d);
    return out;
}
