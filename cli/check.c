/* cli/check.c: `pflref verify` (re-run every golden vector through the
 * reference) and `pflref check` (compare a candidate implementation's
 * results with golden vectors).  Glue only: finding files, pairing vectors
 * with candidates, filters, and the report; the comparison itself is
 * pflref_golden_verify / pflref_golden_check. */
#include <dirent.h>
#include <fnmatch.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"

/* ---- files ------------------------------------------------------------- */

typedef struct {
    char **paths;
    size_t n, cap;
} file_list;

static int add_path(file_list *fl, const char *path)
{
    if (fl->n == fl->cap) {
        size_t cap = fl->cap ? 2 * fl->cap : 16;
        char **p = realloc(fl->paths, cap * sizeof *p);
        if (p == NULL)
            return -1;
        fl->paths = p;
        fl->cap = cap;
    }
    size_t len = strlen(path) + 1;
    fl->paths[fl->n] = malloc(len);
    if (fl->paths[fl->n] == NULL)
        return -1;
    memcpy(fl->paths[fl->n++], path, len);
    return 0;
}

static void file_list_free(file_list *fl)
{
    for (size_t i = 0; i < fl->n; i++)
        free(fl->paths[i]);
    free(fl->paths);
    fl->paths = NULL;
    fl->n = fl->cap = 0;
}

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Add path (a file) or every *.json below it (a folder, recursively, in
 * sorted order so reports are stable).  Returns the number of problems. */
static size_t collect(const char *path, file_list *fl)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        fprintf(stderr, "pflref: %s: no such file or folder\n", path);
        return 1;
    }
    if (!S_ISDIR(sb.st_mode))
        return add_path(fl, path) == 0 ? 0 : 1;
    struct dirent **names;
    int n = scandir(path, &names, NULL, alphasort);
    if (n < 0) {
        fprintf(stderr, "pflref: %s: cannot read the folder\n", path);
        return 1;
    }
    size_t problems = 0;
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        if (name[0] != '.') {
            size_t len = strlen(path) + strlen(name) + 2;
            char *child = malloc(len);
            struct stat cb;
            if (child == NULL) {
                problems++;
            } else {
                snprintf(child, len, "%s/%s", path, name);
                if (stat(child, &cb) == 0 &&
                    (S_ISDIR(cb.st_mode) || has_suffix(name, ".json")))
                    problems += collect(child, fl);
                free(child);
            }
        }
        free(names[i]);
    }
    free(names);
    return problems;
}

static int is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* ---- reports ----------------------------------------------------------- */

/* The shortest decimal that reads back as x (at most 17 digits). */
static const char *shortest(double x, char buf[32])
{
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, 32, "%.*g", p, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    return buf;
}

/* "w (server, round 1)[0]: expected 4.309375, got 5.309375" */
static void print_divergence(const pflref_divergence *d, const char *who)
{
    printf("%s (%s", d->name, d->event);
    if (d->round >= 0)
        printf(", round %ld", d->round);
    if (d->client >= 0)
        printf(", client %ld", d->client);
    if (d->step >= 0)
        printf(", step %ld", d->step);
    if (d->missing)
        printf("): not produced by %s (or of another length)\n", who);
    else {
        char e[32], g[32];
        printf(")[%zu]: expected %s, got %s\n", d->index,
               shortest(d->expected, e), shortest(d->got, g));
    }
}

/* ---- verify ------------------------------------------------------------ */

/* What a .json file holds: 0 not JSON (je says where), 1 a golden vector,
 * 2 JSON of another kind (problem files and specs live beside the
 * vectors). */
static int classify(const char *text, size_t len, json_error_t *je)
{
    json_t *root = json_loadb(text, len, 0, je);
    if (root == NULL)
        return 0;
    json_decref(root);
    return pflref_golden_is_vector(text, len) ? 1 : 2;
}

static void print_bad_json(const char *path, const json_error_t *je)
{
    fprintf(stderr, "pflref: %s: not valid JSON: line %d, column %d: %s\n",
            path, je->line, je->column, je->text);
}

/* Read the vector at path into *text (free() it), *len: 1 when it is one;
 * 0 when it is other JSON found in a folder (skipped); −1 when it is
 * unreadable, broken JSON, or not a vector though the user named it
 * (`named`), which is reported and counted in *errors. */
static int load_vector(const char *path, int named, char **text, size_t *len,
                       size_t *errors)
{
    pflref_error err;
    pflref_error_clear(&err);
    if (pflref_read_file(path, text, len, &err) != PFLREF_OK) {
        cli_fail(&err, path);
        ++*errors;
        return -1;
    }
    json_error_t je;
    int kind = classify(*text, *len, &je);
    if (kind == 1)
        return 1;
    free(*text);
    *text = NULL;
    if (kind == 0)
        print_bad_json(path, &je);
    else if (named)
        fprintf(stderr, "pflref: %s: not a golden vector ("
                        PFLREF_GOLDEN_FORMAT ")\n", path);
    if (kind == 0 || named) {
        ++*errors;
        return -1;
    }
    return 0;
}

typedef struct {
    size_t errors, passed, failed, numbers;
    file_list ids;
} verify_tally;

/* Verify one file; `named` when the user named it (it must then be a
 * vector), else found in a folder (other JSON is skipped, broken JSON is
 * not). */
static void verify_one(const char *path, int named, verify_tally *t)
{
    pflref_error err;
    pflref_error_clear(&err);
    char *text;
    size_t len;
    if (load_vector(path, named, &text, &len, &t->errors) <= 0)
        return;
    /* Ids are citable names: two vectors may not share one. */
    char id[128];
    if (pflref_golden_describe(text, len, id, sizeof id, NULL, 0, &err) ==
        PFLREF_OK) {
        for (size_t k = 0; k < t->ids.n; k++)
            if (strcmp(t->ids.paths[k], id) == 0) {
                fprintf(stderr, "pflref: %s: id: duplicate id \"%s\"\n", path,
                        id);
                t->errors++;
                free(text);
                return;
            }
        if (add_path(&t->ids, id) != 0)
            t->errors++;
    }
    char dir[PFLREF_PATH_MAX];
    pflref_file_folder(path, dir, sizeof dir);
    pflref_golden_report rep;
    pflref_status st = pflref_golden_verify(text, len, dir, &rep, &err);
    free(text);
    if (st != PFLREF_OK) {
        cli_fail(&err, path);
        t->errors++;
        return;
    }
    t->numbers += rep.numbers;
    if (rep.mismatches == 0) {
        t->passed++;
        return;
    }
    t->failed++;
    printf("FAIL %s: %zu of %zu quantities differ; first divergence: ",
           rep.id, rep.mismatches, rep.quantities);
    print_divergence(&rep.first, "the reference");
    printf("  replay: pflref verify %s\n", path);
}

int cli_verify(int argc, char **argv)
{
    if (argc == 0)
        return cli_usage_error("verify needs a file or folder", NULL);
    verify_tally t = {.errors = 0,
                      .passed = 0,
                      .failed = 0,
                      .numbers = 0,
                      .ids = {NULL, 0, 0}};
    for (int i = 0; i < argc; i++) {
        file_list files = {NULL, 0, 0};
        t.errors += collect(argv[i], &files);
        const int named = !is_dir(argv[i]);
        for (size_t f = 0; f < files.n; f++)
            verify_one(files.paths[f], named, &t);
        file_list_free(&files);
    }
    file_list_free(&t.ids);
    printf("verify: %zu vectors reproduced, %zu failed, %zu malformed or "
           "not run (%zu numbers compared)\n", t.passed, t.failed, t.errors,
           t.numbers);
    if (t.errors > 0)
        return EXIT_USAGE;
    if (t.failed > 0)
        return EXIT_MISMATCH;
    if (t.passed == 0) {
        fprintf(stderr, "pflref: verify: no golden vector found\n");
        return EXIT_NOTHING;
    }
    return EXIT_OK;
}

/* ---- check ------------------------------------------------------------- */

#define MAX_PATTERNS 32

typedef struct {
    int json;
    pflref_check_options cmp;
    size_t min_vectors;
    const char *include[MAX_PATTERNS];
    size_t n_include;
    const char *exclude[MAX_PATTERNS];
    size_t n_exclude;
} check_options;

typedef struct {
    size_t compared, passed, mismatched, wrong_outcome, malformed, skipped;
} check_tally;

/* A pattern selects a vector when it matches its id (a glob, or a prefix
 * ending at a '/') or names one of its flags. */
static int pattern_selects(const char *pat, const char *id, const char *flags)
{
    size_t n = strlen(pat);
    if (fnmatch(pat, id, 0) == 0)
        return 1;
    if (strncmp(pat, id, n) == 0 && (pat[n - 1] == '/' || id[n] == '/'))
        return 1;
    return pflref_name_in_list(flags, pat);
}

static int selected(const check_options *o, const char *id, const char *flags)
{
    int in = o->n_include == 0;
    for (size_t i = 0; i < o->n_include && !in; i++)
        in = pattern_selects(o->include[i], id, flags);
    for (size_t i = 0; i < o->n_exclude && in; i++)
        in = !pattern_selects(o->exclude[i], id, flags);
    return in;
}

/* A candidate file: its text and id. */
typedef struct {
    char *path;
    char *text;
    size_t len;
    char id[128];
} candidate;

static json_t *divergence_json(const pflref_divergence *d)
{
    json_t *o = json_object();
    json_object_set_new(o, "event", json_string(d->event));
    json_object_set_new(o, "phase", json_string(d->phase));
    if (d->round >= 0)
        json_object_set_new(o, "round", json_integer(d->round));
    if (d->client >= 0)
        json_object_set_new(o, "client", json_integer(d->client));
    if (d->step >= 0)
        json_object_set_new(o, "step", json_integer(d->step));
    json_object_set_new(o, "name", json_string(d->name));
    json_object_set_new(o, "missing", json_boolean(d->missing));
    if (!d->missing) {
        json_object_set_new(o, "index", json_integer((json_int_t)d->index));
        json_object_set_new(o, "expected", json_real(d->expected));
        json_object_set_new(o, "got", json_real(d->got));
    }
    return o;
}

/* A count or a ULP distance as a JSON integer (capped at INT64_MAX). */
static json_t *count_json(uint64_t n)
{
    return json_integer(n > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)n);
}

/* The statistics q as members of o, in the report's order. */
static void put_stats(json_t *o, const pflref_quantity_stats *q)
{
    json_object_set_new(o, "quantities", count_json(q->quantities));
    json_object_set_new(o, "numbers", count_json(q->numbers));
    json_object_set_new(o, "mismatches", count_json(q->mismatches));
    json_object_set_new(o, "max_abs_err", json_real(q->max_abs_err));
    json_object_set_new(o, "max_rel_err", json_real(q->max_rel_err));
    json_object_set_new(o, "min_lre", json_real(q->min_lre));
    json_object_set_new(o, "max_ulp", count_json(q->max_ulp));
}

/* A comparison's report entry: the totals, per quantity name, the
 * divergences, what the candidate did not record. */
static void put_comparison(json_t *entry, const pflref_golden_report *rep)
{
    const pflref_quantity_stats all = {.quantities = rep->quantities,
                                       .numbers = rep->numbers,
                                       .mismatches = rep->mismatches,
                                       .max_abs_err = rep->max_abs_err,
                                       .max_rel_err = rep->max_rel_err,
                                       .min_lre = rep->min_lre,
                                       .max_ulp = rep->max_ulp};
    put_stats(entry, &all);
    json_t *names = json_array();
    for (size_t k = 0; k < rep->n_names; k++) {
        json_t *qo = json_object();
        json_object_set_new(qo, "name", json_string(rep->by_name[k].name));
        put_stats(qo, &rep->by_name[k]);
        json_array_append_new(names, qo);
    }
    json_object_set_new(entry, "by_quantity", names);
    if (rep->diverged) {
        json_object_set_new(entry, "first_divergence",
                            divergence_json(&rep->first));
        json_t *list = json_array();
        for (size_t k = 0; k < rep->n_listed; k++)
            json_array_append_new(list, divergence_json(&rep->listed[k]));
        json_object_set_new(entry, "divergences", list);
    }
    json_object_set_new(entry, "not_recorded", count_json(rep->missing));
    json_object_set_new(entry, "skipped", count_json(rep->skipped));
}

static void print_pass(const pflref_golden_report *rep)
{
    printf("PASS %s: %zu quantities, %zu numbers; max abs err %.3g, max rel "
           "err %.3g, >= %.2f correct digits, max %llu ulp", rep->id,
           rep->quantities, rep->numbers, rep->max_abs_err, rep->max_rel_err,
           rep->min_lre, (unsigned long long)rep->max_ulp);
    if (rep->skipped > 0)
        printf(" (%zu expected quantities not recorded, skipped under "
               "--partial)", rep->skipped);
    printf("\n");
}

/* The failure, each quantity name's digits, with resync every further
 * divergence, and the command that replays it. */
static void print_fail(const pflref_golden_report *rep, int resync,
                       const char *replay)
{
    printf("FAIL %s: %zu of %zu quantities differ", rep->id, rep->mismatches,
           rep->quantities);
    if (rep->missing > 0)
        printf(" (%zu not recorded by the candidate)", rep->missing);
    if (rep->numbers > 0)
        printf("; over the %zu numbers compared: max abs err %.3g, max rel "
               "err %.3g, %.2f correct digits", rep->numbers,
               rep->max_abs_err, rep->max_rel_err, rep->min_lre);
    printf("; first divergence: ");
    print_divergence(&rep->first, "the candidate");
    for (size_t k = 0; k < rep->n_names; k++) {
        const pflref_quantity_stats *q = &rep->by_name[k];
        printf("  %-10s %zu of %zu differ; max abs err %.3g, max rel err "
               "%.3g, %.2f correct digits, max %llu ulp\n", q->name,
               q->mismatches, q->quantities, q->max_abs_err, q->max_rel_err,
               q->min_lre, (unsigned long long)q->max_ulp);
    }
    for (size_t k = 1; resync && k < rep->n_listed; k++) {
        printf("  also: ");
        print_divergence(&rep->listed[k], "the candidate");
    }
    printf("  replay: %s\n", replay);
}

/* The outcome of one pair into the tally, the entry and (text report) the
 * output; returns the entry's status. */
static const char *report_pair(pflref_status st, const pflref_error *err,
                               const pflref_golden_report *rep,
                               const char *vpath, const candidate *c,
                               const check_options *o, const char *replay,
                               check_tally *tally, json_t *entry)
{
    if (st != PFLREF_OK) {
        tally->malformed++;
        json_object_set_new(entry, "where", json_string(err->where));
        json_object_set_new(entry, "message", json_string(err->message));
        /* the file at fault: the vector ("expected:...") or the candidate */
        if (!o->json)
            cli_fail(err, strncmp(err->where, "expected:", 9) == 0 ? vpath
                                                                  : c->path);
        return "malformed";
    }
    tally->compared++;
    if (rep->wrong_outcome) {
        tally->wrong_outcome++;
        json_object_set_new(entry, "outcome", json_string(rep->outcome));
        if (!o->json)
            printf("FAIL %s: the candidate reports outcome \"%s\", the vector "
                   "expects \"ok\"\n  replay: %s\n", rep->id, rep->outcome,
                   replay);
        return "wrong_outcome";
    }
    if (rep->mismatches == 0)
        tally->passed++;
    else
        tally->mismatched++;
    put_comparison(entry, rep);
    if (!o->json && rep->mismatches == 0)
        print_pass(rep);
    else if (!o->json)
        print_fail(rep, o->cmp.resync, replay);
    return rep->mismatches == 0 ? "pass" : "mismatch";
}

/* Compare one pair; print the text report or add to the JSON report. */
static void check_pair(const char *vpath, const char *vtext, size_t vlen,
                       const candidate *c, const check_options *o,
                       check_tally *tally, json_t *report)
{
    char dir[PFLREF_PATH_MAX], replay[8192];
    pflref_file_folder(vpath, dir, sizeof dir);
    snprintf(replay, sizeof replay, "pflref check %s %s%s%s%s", vpath, c->path,
             o->cmp.resync ? " --resync" : "",
             o->cmp.partial ? " --partial" : "",
             o->cmp.precision == PFLREF_PRECISION_FP32
                 ? " --candidate-precision fp32" : "");
    pflref_error err;
    pflref_error_clear(&err);
    pflref_golden_report rep;
    pflref_status st = pflref_golden_check(vtext, vlen, dir, c->text, c->len,
                                           &o->cmp, &rep, &err);
    json_t *entry = json_object();
    json_object_set_new(entry, "id", json_string(rep.id[0] ? rep.id : c->id));
    json_object_set_new(entry, "expected", json_string(vpath));
    json_object_set_new(entry, "candidate", json_string(c->path));
    const char *status = report_pair(st, &err, &rep, vpath, c, o, replay,
                                     tally, entry);
    json_object_set_new(entry, "status", json_string(status));
    json_object_set_new(entry, "replay", json_string(replay));
    json_array_append_new(report, entry);
}

static int parse_check_options(int argc, char **argv, check_options *o,
                               const char **expected, const char **cand)
{
    memset(o, 0, sizeof *o);
    o->cmp.same_id = 1;
    *expected = *cand = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int has_value = i + 1 < argc;
        if (strcmp(a, "--json") == 0) {
            o->json = 1;
        } else if (strcmp(a, "--resync") == 0) {
            o->cmp.resync = 1;
        } else if (strcmp(a, "--partial") == 0) {
            o->cmp.partial = 1;
        } else if (strcmp(a, "--min-vectors") == 0 && has_value) {
            char *end;
            long n = strtol(argv[++i], &end, 10);
            if (*end != '\0' || n < 0)
                return cli_usage_error("--min-vectors takes a count", argv[i]);
            o->min_vectors = (size_t)n;
        } else if (strcmp(a, "--include") == 0 && has_value) {
            if (o->n_include == MAX_PATTERNS)
                return cli_usage_error("too many --include patterns", NULL);
            o->include[o->n_include++] = argv[++i];
        } else if (strcmp(a, "--exclude") == 0 && has_value) {
            if (o->n_exclude == MAX_PATTERNS)
                return cli_usage_error("too many --exclude patterns", NULL);
            o->exclude[o->n_exclude++] = argv[++i];
        } else if (strcmp(a, "--candidate-precision") == 0 && has_value) {
            const char *p = argv[++i];
            if (strcmp(p, "fp32") == 0)
                o->cmp.precision = PFLREF_PRECISION_FP32;
            else if (strcmp(p, "fp64") == 0)
                o->cmp.precision = PFLREF_PRECISION_FP64;
            else
                return cli_usage_error("--candidate-precision is fp32 or fp64",
                                       p);
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
    if (*cand == NULL)
        return cli_usage_error("check needs EXPECTED and CANDIDATE", NULL);
    return EXIT_OK;
}

/* Read every candidate result below path; candidates without an id are
 * malformed in folder mode. */
static candidate *read_candidates(const char *path, int folder_mode,
                                  size_t *count, check_tally *tally)
{
    file_list files = {NULL, 0, 0};
    tally->malformed += collect(path, &files);
    candidate *cs = calloc(files.n ? files.n : 1, sizeof *cs);
    size_t n = 0;
    for (size_t f = 0; cs != NULL && f < files.n; f++) {
        candidate *c = &cs[n];
        pflref_error err;
        if (pflref_read_file(files.paths[f], &c->text, &c->len, &err) !=
            PFLREF_OK) {
            cli_fail(&err, files.paths[f]);
            tally->malformed++;
            continue;
        }
        json_error_t je;
        json_t *root = json_loadb(c->text, c->len, 0, &je);
        if (root == NULL) {
            fprintf(stderr, "pflref: %s: not valid JSON: line %d, column %d: "
                            "%s\n", files.paths[f], je.line, je.column,
                    je.text);
            tally->malformed++;
            free(c->text);
            continue;
        }
        const char *id = json_string_value(json_object_get(root, "id"));
        snprintf(c->id, sizeof c->id, "%s", id ? id : "");
        json_decref(root);
        if (folder_mode && c->id[0] == '\0') {
            fprintf(stderr, "pflref: %s: a candidate in a folder needs "
                            "\"id\" (the golden vector's id)\n",
                    files.paths[f]);
            tally->malformed++;
            free(c->text);
            continue;
        }
        c->path = files.paths[f];
        files.paths[f] = NULL;
        n++;
    }
    file_list_free(&files);
    *count = n;
    return cs;
}

/* Check the vector at vpath against its candidate among cands (in folder
 * mode the one with the vector's id, else the only one), if the filters
 * select it. */
static void check_vector(const char *vpath, int named, int folder_mode,
                         const candidate *cands, size_t nc,
                         const check_options *o, check_tally *tally,
                         json_t *report)
{
    char *text;
    size_t len;
    if (load_vector(vpath, named, &text, &len, &tally->malformed) <= 0)
        return;
    pflref_error err;
    char id[128], flags[1024];
    if (pflref_golden_describe(text, len, id, sizeof id, flags, sizeof flags,
                               &err) != PFLREF_OK) {
        fprintf(stderr, "pflref: %s: not a golden vector ("
                        PFLREF_GOLDEN_FORMAT ")\n", vpath);
        tally->malformed++;
    } else if (selected(o, id, flags)) {
        const candidate *match = NULL;
        for (size_t k = 0; k < nc && match == NULL; k++)
            if (!folder_mode || strcmp(cands[k].id, id) == 0)
                match = &cands[k];
        if (match == NULL)
            tally->skipped++;
        else
            check_pair(vpath, text, len, match, o, tally, report);
    }
    free(text);
}

/* The summary (and with --json the whole report) on standard output. */
static void print_summary(const check_options *o, const check_tally *t,
                          int rc, json_t *report)
{
    if (o->json) {
        json_t *root = json_object(), *sum = json_object();
        json_object_set_new(root, "format",
                            json_string("pflref-check-report/1"));
        json_object_set_new(sum, "compared", count_json(t->compared));
        json_object_set_new(sum, "passed", count_json(t->passed));
        json_object_set_new(sum, "numeric_mismatches",
                            count_json(t->mismatched));
        json_object_set_new(sum, "wrong_outcome", count_json(t->wrong_outcome));
        json_object_set_new(sum, "malformed", count_json(t->malformed));
        json_object_set_new(sum, "skipped_no_candidate", count_json(t->skipped));
        json_object_set_new(sum, "exit", json_integer(rc));
        json_object_set_new(root, "summary", sum);
        json_object_set_new(root, "vectors", json_incref(report));
        char *text = json_dumps(root, JSON_PRESERVE_ORDER | JSON_INDENT(1) |
                                          JSON_REAL_PRECISION(17));
        if (text != NULL)
            puts(text);
        free(text);
        json_decref(root);
        return;
    }
    printf("check: %zu compared: %zu passed, %zu numeric mismatches, %zu "
           "wrong outcome classes, %zu malformed; %zu skipped (no "
           "candidate)\n", t->compared, t->passed, t->mismatched,
           t->wrong_outcome, t->malformed, t->skipped);
    if (rc == EXIT_NOTHING && t->compared == 0)
        fprintf(stderr, "pflref: check: no vector was compared; nothing "
                        "checked is a failure\n");
    else if (rc == EXIT_NOTHING)
        fprintf(stderr, "pflref: check: %zu vectors compared, fewer than "
                        "--min-vectors %zu\n", t->compared, o->min_vectors);
}

int cli_check(int argc, char **argv)
{
    check_options o;
    const char *epath, *cpath;
    int rc = parse_check_options(argc, argv, &o, &epath, &cpath);
    if (rc != EXIT_OK)
        return rc;
    check_tally tally = {.compared = 0,
                         .passed = 0,
                         .mismatched = 0,
                         .wrong_outcome = 0,
                         .malformed = 0,
                         .skipped = 0};
    const int folder_mode = is_dir(epath) || is_dir(cpath);
    size_t nc = 0;
    candidate *cands = read_candidates(cpath, folder_mode, &nc, &tally);
    file_list vectors = {NULL, 0, 0};
    tally.malformed += collect(epath, &vectors);
    json_t *report = json_array();
    for (size_t f = 0; cands != NULL && f < vectors.n; f++)
        check_vector(vectors.paths[f], !is_dir(epath), folder_mode, cands, nc,
                     &o, &tally, report);
    if (tally.malformed > 0)
        rc = EXIT_USAGE;
    else if (tally.mismatched > 0 || tally.wrong_outcome > 0)
        rc = EXIT_MISMATCH;
    else if (tally.compared == 0 || tally.compared < o.min_vectors)
        rc = EXIT_NOTHING;
    print_summary(&o, &tally, rc, report);
    json_decref(report);
    for (size_t k = 0; k < nc; k++) {
        free(cands[k].path);
        free(cands[k].text);
    }
    free(cands);
    file_list_free(&vectors);
    return rc;
}
