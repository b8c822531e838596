/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cli/options.c: the options of `pflref check`, and run's --arrays and
 * --inline-max (docs/cli.md), each refused by name when its value is not
 * what it takes: a count that is not a count or overflows, an empty
 * pattern, a fraction outside (0, 1], a form that is not inline or files.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

/* A count: decimal digits only (no sign, no space), below 2^64. */
static int parse_count(const char *s, size_t *out)
{
    if (s[0] == '\0' || strspn(s, "0123456789") != strlen(s))
        return -1;
    errno = 0;
    unsigned long long n = strtoull(s, NULL, 10);
    if (errno == ERANGE || n > (unsigned long long)SIZE_MAX)
        return -2;
    *out = (size_t)n;
    return 0;
}

int cli_run_output_option(const char *a, const char *v,
                          pflref_output_override *o)
{
    size_t n;
    if (strcmp(a, "--arrays") == 0) {
        if (strcmp(v, "inline") == 0)
            o->form = PFLREF_ARRAYS_INLINE;
        else if (strcmp(v, "files") == 0)
            o->form = PFLREF_ARRAYS_FILES;
        else
            return cli_usage_error("--arrays is inline or files", v);
        o->set_form = 1;
    } else if (strcmp(a, "--inline-max") == 0) {
        /* the bound of output.inline_max in a spec (a count of a spec) */
        if (parse_count(v, &n) != 0 || n > CLI_INLINE_MAX_MAX)
            return cli_usage_error("--inline-max takes a count of numbers "
                                   "from 0 to 2147483648", v);
        o->inline_max = n;
        o->set_inline_max = 1;
    } else {
        return -1;
    }
    return EXIT_OK;
}

/* --partial-min: a count of records (digits only, >= 1), or a fraction of
 * the records the vector expects: a number with a decimal point in (0, 1],
 * or a percentage in (0%, 100%]. */
static int parse_partial_min(const char *s, cli_check_options *o)
{
    size_t n;
    int rc = parse_count(s, &n);
    if (rc == 0)
        return n >= 1 ? (o->partial_min_count = n, EXIT_OK)
                      : cli_usage_error("--partial-min takes a count >= 1 or a "
                                        "fraction in (0, 1]", s);
    if (rc == -2)
        return cli_usage_error("--partial-min is out of range", s);
    char *end;
    errno = 0;
    double f = strtod(s, &end);
    const int percent = end[0] == '%' && end[1] == '\0';
    if (percent)
        f /= 100.0;
    if (end == s || (*end != '\0' && !percent) || errno == ERANGE ||
        strchr("0123456789.", s[0]) == NULL || !(f > 0.0 && f <= 1.0))
        return cli_usage_error("--partial-min takes a count >= 1 or a "
                               "fraction in (0, 1] (0.5, 50%)", s);
    o->partial_min_fraction = f;
    return EXIT_OK;
}

int cli_parse_precision(const char *v, pflref_precision *p)
{
    static const char *const names[] = {"fp64", "fp32", "bf16", "tf32"};
    for (int k = 0; k < 4; k++)
        if (strcmp(v, names[k]) == 0) {
            *p = (pflref_precision)k;
            return 0;
        }
    return -1;
}

const char *cli_precision_name(pflref_precision p)
{
    static const char *const names[] = {"fp64", "fp32", "bf16", "tf32"};
    return (unsigned)p < 4 ? names[p] : "fp64";
}

/* One option that takes a value (argv[*i] is the option, argv[*i + 1] its
 * value, which exists): EXIT_OK, or the usage error. */
static int option_value(const char *a, const char *v, cli_check_options *o)
{
    size_t n;
    if (strcmp(a, "--min-vectors") == 0) {
        int rc = parse_count(v, &n);
        if (rc == -2)
            return cli_usage_error("--min-vectors is out of range (a count "
                                   "below 2^64)", v);
        if (rc != 0)
            return cli_usage_error("--min-vectors takes a count", v);
        o->min_vectors = n;
    } else if (strcmp(a, "--partial-min") == 0) {
        return parse_partial_min(v, o);
    } else if (strcmp(a, "--include") == 0 || strcmp(a, "--exclude") == 0) {
        const int inc = a[2] == 'i';
        size_t *count = inc ? &o->n_include : &o->n_exclude;
        if (v[0] == '\0')
            return cli_usage_error(inc ? "--include takes a pattern, not an "
                                         "empty string"
                                       : "--exclude takes a pattern, not an "
                                         "empty string", NULL);
        if (*count == CLI_MAX_PATTERNS)
            return cli_usage_error(inc ? "too many --include patterns"
                                       : "too many --exclude patterns", NULL);
        (inc ? o->include : o->exclude)[(*count)++] = v;
    } else if (strcmp(a, "--candidate-precision") == 0) {
        if (cli_parse_precision(v, &o->cmp.precision) != 0)
            return cli_usage_error(CLI_PRECISION_USAGE, v);
    } else if (strcmp(a, "--mca-runs") == 0) {
        /* Monte Carlo runs: 1 … PFLREF_MCA_MAX_RUNS */
        if (parse_count(v, &n) != 0 || n < 1 || n > PFLREF_MCA_MAX_RUNS)
            return cli_usage_error("--mca-runs takes a count from 1 to 64",
                                   v);
        o->cmp.mca_runs = n;
    } else if (strcmp(a, "--mca-c") == 0) {
        char *end;
        errno = 0;
        const double c = strtod(v, &end);
        if (end == v || *end != '\0' || errno == ERANGE || !(c >= 1.0) ||
            !(c <= 1e6))
            return cli_usage_error("--mca-c takes a number from 1 to 1e6", v);
        o->cmp.mca_c = c;
    } else if (strcmp(a, "--mca-seed") == 0) {
        if (parse_count(v, &n) != 0)
            return cli_usage_error("--mca-seed takes a count below 2^64", v);
        o->cmp.mca_seed = (uint64_t)n;
    } else {
        return -1;   /* not an option with a value */
    }
    return EXIT_OK;
}

int cli_check_parse(int argc, char **argv, cli_check_options *o,
                    const char **expected, const char **cand)
{
    memset(o, 0, sizeof *o);
    o->cmp.same_id = 1;
    *expected = *cand = NULL;
    int partial_min = 0;
    int budget = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--budget") == 0 && i + 1 < argc) {  /* --diagnose's */
            const int brc = cli_parse_budget(argv[++i], &o->diagnose_budget);
            if (brc != EXIT_OK)
                return brc;
            budget = 1;
            continue;
        }
        int rc = i + 1 < argc ? option_value(a, argv[i + 1], o) : -1;
        if (rc > 0)
            return rc;
        if (rc == 0) {
            partial_min |= strcmp(a, "--partial-min") == 0;
            i++;
        } else if (strcmp(a, "--json") == 0) {
            o->json = 1;
        } else if (strcmp(a, "--diagnose") == 0) {
            o->diagnose = 1;
        } else if (strcmp(a, "--resync") == 0) {
            o->cmp.resync = 1;
        } else if (strcmp(a, "--partial") == 0) {
            o->cmp.partial = 1;
        } else if (a[0] == '-' && a[1] != '\0') {
            return cli_usage_error("unknown option or missing value", a);
        } else if (*expected == NULL) {
            *expected = a;
        } else if (*cand == NULL) {
            *cand = a;
        } else {
            return cli_usage_error("check takes EXPECTED and CANDIDATE", a);
        }
    }
    if (partial_min && !o->cmp.partial)
        return cli_usage_error("--partial-min needs --partial", NULL);
    o->partial_min_given = partial_min;
    if (budget && !o->diagnose)
        return cli_usage_error("--budget needs --diagnose", NULL);
    if (*cand == NULL)
        return cli_usage_error("check needs EXPECTED and CANDIDATE", NULL);
    return EXIT_OK;
}
