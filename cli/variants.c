/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cli/variants.c: pflref list --variants [--markdown] [GOLDEN_DIR]: every
 * variant pflref knows, from the registry of switches and presets
 * (pflref_params, pflref_presets), with the golden vectors that run each
 * one.  docs/variants.md is this command's Markdown output on golden/
 * (a test fails when the two differ), so the table cannot drift.
 *
 * Without GOLDEN_DIR the vectors column is "—".  A vector "shows" a switch value when its spec, as the reference reads
 * it, sets a switch its algorithm reads to that non-paper value (by a
 * preset or explicitly); it shows a preset when its spec names it.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

/* The variants each vector shows: one line per vector, "alg key=value ..."
 * with its id, read once. */
typedef struct {
    cli_list ids;       /* vector ids, sorted as walked              */
    cli_list shows;     /* " alg preset:NAME key=value ... " per id  */
} shown;

static int read_vector(const char *path, shown *s)
{
    char *text = NULL;
    size_t len = 0;
    pflref_error err;
    pflref_error_clear(&err);
    if (pflref_read_file(path, &text, &len, &err) != PFLREF_OK)
        return cli_fail(&err, path);
    if (!pflref_golden_is_vector(text, len)) {
        free(text);
        return EXIT_OK;   /* problem files, specs */
    }
    char dir[PFLREF_PATH_MAX];
    pflref_file_folder(path, dir, sizeof dir);
    pflref_spec *spec = NULL;
    pflref_status st = pflref_golden_spec(text, len, dir, &spec, &err);
    free(text);
    if (st != PFLREF_OK)
        return cli_fail(&err, path);
    const char *alg = spec->algorithm->name;
    char line[2048];
    int n = snprintf(line, sizeof line, " %s preset:%s ", alg, spec->preset);
    size_t np;
    const pflref_param *ps = pflref_params(&np);
    for (size_t i = 0; i < np && n > 0 && (size_t)n < sizeof line; i++) {
        const pflref_param *p = &ps[i];
        if (p->type != PFLREF_PARAM_ENUM ||
            !pflref_name_in_list(p->algorithms, alg) ||
            pflref_param_find_for(p->name, alg) != p)
            continue;
        const char *v = pflref_hyper_get_enum(&spec->hyper, p);
        if (strcmp(v, p->values[0]) != 0)
            n += snprintf(line + n, sizeof line - (size_t)n, "%s=%s ",
                          p->name, v);
    }
    int rc = cli_list_add(&s->ids, spec->id ? spec->id : path) ||
                     cli_list_add(&s->shows, line)
                 ? EXIT_INTERNAL
                 : EXIT_OK;
    pflref_spec_free(spec);
    return rc;
}

/* The ids of the vectors whose line contains every one of the needles
 * (NULL ends), comma-separated in backticks, or "—". */
static void print_vectors(const shown *s, const char *alg, const char *what)
{
    char a[64];
    snprintf(a, sizeof a, " %s ", alg);
    int any = 0;
    for (size_t i = 0; i < s->ids.n; i++) {
        const char *line = s->shows.items[i];
        if (strncmp(line, a, strlen(a)) != 0 || strstr(line, what) == NULL)
            continue;
        printf("%s`%s`", any ? ", " : "", s->ids.items[i]);
        any = 1;
    }
    printf("%s |\n", any ? "" : "—");
}

/* The k-th " | "-separated part of doc when it has exactly `parts` parts,
 * else doc, into buf. */
static void doc_part(const char *doc, size_t k, size_t parts, char *buf,
                     size_t n)
{
    size_t count = 1;
    for (const char *c = strstr(doc, " | "); c; c = strstr(c + 3, " | "))
        count++;
    snprintf(buf, n, "%s", doc);
    if (count != parts)
        return;
    const char *start = doc;
    for (size_t i = 0; i < k; i++)
        start = strstr(start, " | ") + 3;
    const char *end = strstr(start, " | ");
    snprintf(buf, n, "%.*s", (int)(end ? (size_t)(end - start)
                                       : strlen(start)), start);
}

/* The code key=value reproduces, as the registry's table of value sources
 * names it (ref/engine/params_links.c), then the presets of alg that set
 * it, as "preset `NAME`"; "" when neither names it. */
static void sources(const char *alg, const char *key, const char *value,
                    char *buf, size_t n)
{
    char want[160];
    snprintf(want, sizeof want, "%s=%s", key, value);
    buf[0] = '\0';
    size_t nv;
    const pflref_value_source *vs = pflref_value_sources(&nv);
    for (size_t i = 0; i < nv; i++)
        if ((vs[i].algorithm[0] == '\0' ||
             strcmp(vs[i].algorithm, alg) == 0) &&
            strcmp(vs[i].name, key) == 0 && strcmp(vs[i].value, value) == 0) {
            snprintf(buf, n, "%s", vs[i].source);
            break;
        }
    size_t np;
    const pflref_preset *pre = pflref_presets(&np);
    for (size_t i = 0; i < np; i++) {
        const char *hit = strstr(pre[i].settings, want);
        size_t w = strlen(want);
        if (strcmp(pre[i].algorithm, alg) != 0 || hit == NULL ||
            (hit[w] != ' ' && hit[w] != '\0'))
            continue;
        size_t used = strlen(buf);
        snprintf(buf + used, n - used, "%spreset `%s`", used ? "; " : "",
                 pre[i].name);
    }
}

static void switch_rows(const pflref_algorithm *alg, const shown *s)
{
    size_t np;
    const pflref_param *ps = pflref_params(&np);
    for (size_t i = 0; i < np; i++) {
        const pflref_param *p = &ps[i];
        if (p->type != PFLREF_PARAM_ENUM ||
            !pflref_name_in_list(p->algorithms, alg->name))
            continue;
        size_t parts = 0;
        while (p->values[parts] != NULL)
            parts++;
        for (size_t k = 1; k < parts; k++) {
            char what[512], src[512], needle[160];
            doc_part(p->doc, k, parts, what, sizeof what);
            sources(alg->name, p->name, p->values[k], src, sizeof src);
            printf("| %s | switch `%s` | `%s` | %s | %s | ", alg->name,
                   p->name, p->values[k], src[0] ? src : "—", what);
            snprintf(needle, sizeof needle, " %s=%s ", p->name,
                     p->values[k]);
            print_vectors(s, alg->name, needle);
        }
    }
}

static void preset_rows(const pflref_algorithm *alg, const shown *s)
{
    size_t np;
    const pflref_preset *pre = pflref_presets(&np);
    for (size_t i = 0; i < np; i++) {
        if (strcmp(pre[i].algorithm, alg->name) != 0)
            continue;
        char needle[64];
        printf("| %s | preset | `%s` | %s | `%s`%s%s | ", alg->name,
               pre[i].name, pre[i].source, pre[i].settings,
               pre[i].split ? ", split " : "", pre[i].split ? pre[i].split
                                                            : "");
        snprintf(needle, sizeof needle, " preset:%s ", pre[i].name);
        print_vectors(s, alg->name, needle);
    }
}

static void print_markdown(const shown *s, const char *golden)
{
    printf("# Variants\n\n"
           "<!-- Generated by `pflref list --variants --markdown %s`; do not "
           "edit (a test compares). -->\n\n"
           "Every variant pflref knows: each switch value other than the "
           "paper's reading (value 0 of every switch, `pflref list`) and "
           "each preset, by algorithm, with the code it reproduces, what it "
           "changes and the golden vectors whose spec runs it. `pflref "
           "diagnose` searches these, and probes of every hyperparameter "
           "(× 2, × ½, 0, the default; a count ± 1), for the variant a "
           "failing candidate computes (docs/cli.md, \"diagnose\").\n\n"
           "| algorithm | switch or preset | value | source | what it "
           "changes | vectors |\n|---|---|---|---|---|---|\n", golden);
    size_t na;
    const pflref_algorithm *const *algs = pflref_algorithms(&na);
    for (size_t a = 0; a < na; a++) {
        preset_rows(algs[a], s);
        switch_rows(algs[a], s);
    }
}

int cli_list_variants(int argc, char **argv)
{
    const char *golden = NULL;
    int markdown = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--markdown") == 0)
            markdown = 1;
        else if (argv[i][0] == '-' || golden != NULL)
            return cli_usage_error("list --variants takes --markdown and one "
                                   "GOLDEN_DIR", argv[i]);
        else
            golden = argv[i];
    }
    shown s = {.ids = {.n = 0}};
    cli_walk w = {.paths = {.n = 0}};
    int rc = EXIT_OK;
    if (golden != NULL && cli_walk_add(&w, golden) != 0)
        rc = EXIT_USAGE;
    for (size_t i = 0; i < w.paths.n && rc == EXIT_OK; i++)
        rc = read_vector(w.paths.items[i], &s);
    /* the table is Markdown either way; --markdown says so explicitly */
    (void)markdown;
    if (rc == EXIT_OK)
        print_markdown(&s, golden ? golden : "");
    cli_walk_free(&w);
    cli_list_free(&s.ids);
    cli_list_free(&s.shows);
    return rc;
}
