/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cli/check.c: `pflref verify` (re-run every golden vector through the
 * reference) and `pflref check` (compare a candidate implementation's
 * results with golden vectors).  Glue only: finding files, pairing vectors
 * with candidates, filters, and the report; the comparison itself is
 * pflref_golden_verify / pflref_golden_check. */
#include <fnmatch.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include "cli.h"

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
    cli_ids ids;
} verify_tally;

/* Ids are citable names: a second file with the id of an earlier one is
 * an error naming both (0), else the id is recorded (1). */
static int unique_id(cli_ids *ids, const char *id, const char *path,
                     const char *what)
{
    const char *first = cli_ids_add(ids, id, path);
    if (first == NULL)
        return 1;
    fprintf(stderr, "pflref: %s: id: duplicate id \"%s\": %s also has it "
                    "(each %s needs its own id)\n", path, id, first, what);
    return 0;
}

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
    char id[128], flags[1024] = "", word[CLI_WORD_MAX];
    if (pflref_golden_describe(text, len, id, sizeof id, flags, sizeof flags,
                               &err) == PFLREF_OK &&
        !unique_id(&t->ids, id, path, "vector")) {
        t->errors++;
        free(text);
        return;
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
    cli_print_divergence(&rep.first, "the reference");
    cli_print_flags(flags);
    printf("  replay: %s verify %s\n", cli_program_word(), cli_shell_word(path, word));
}

int cli_verify(int argc, char **argv)
{
    cli_progress prog;
    cli_progress_start(&prog, "verify", 0, cli_progress_take_quiet(&argc, argv));
    if (argc == 0)
        return cli_usage_error("verify needs a file or folder", NULL);
    verify_tally t = {.errors = 0, .passed = 0, .failed = 0, .numbers = 0};
    memset(&t.ids, 0, sizeof t.ids);
    /* one walk over every PATH: a file reached twice is verified once */
    cli_walk w;
    memset(&w, 0, sizeof w);
    for (int i = 0; i < argc; i++) {
        const size_t from = w.paths.n;
        t.errors += cli_walk_add(&w, argv[i]);
        const int named = !cli_is_dir(argv[i]);
        for (size_t f = from; f < w.paths.n; f++) {
            cli_progress_item(&prog, "file", f, w.paths.n);
            verify_one(w.paths.items[f], named, &t);
        }
    }
    cli_progress_end(&prog);
    cli_walk_free(&w);
    cli_ids_free(&t.ids);
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

typedef struct {
    size_t compared, passed, mismatched, wrong_outcome, malformed, skipped;
    size_t resync_skipped;            /* refused by --resync, not compared */
    size_t inconclusive;              /* passed but with chaotic records */
    cli_ids vector_ids;               /* ids of the vectors read        */
    int include_hit[CLI_MAX_PATTERNS]; /* the pattern selected a vector */
    int exclude_hit[CLI_MAX_PATTERNS];
} check_tally;

/* A pattern selects a vector when it matches its id (a glob, or a prefix
 * ending at a '/') or names one of its flags (patterns are not empty). */
static int pattern_selects(const char *pat, const char *id, const char *flags)
{
    size_t n = strlen(pat);
    if (fnmatch(pat, id, 0) == 0)
        return 1;
    if (strncmp(pat, id, n) == 0 && (pat[n - 1] == '/' || id[n] == '/'))
        return 1;
    return pflref_name_in_list(flags, pat);
}

/* Whether the filters select the vector; each pattern that matches it is
 * marked in t. */
static int selected(const cli_check_options *o, const char *id,
                    const char *flags, check_tally *t)
{
    int in = o->n_include == 0, out = 0;
    for (size_t i = 0; i < o->n_include; i++)
        if (pattern_selects(o->include[i], id, flags))
            in = t->include_hit[i] = 1;
    for (size_t i = 0; i < o->n_exclude; i++)
        if (pattern_selects(o->exclude[i], id, flags))
            out = t->exclude_hit[i] = 1;
    return in && !out;
}

/* An --include that selected no vector is an error (a misspelt pattern
 * would otherwise narrow the check silently); an --exclude that matched
 * none is a note.  Returns the number of errors. */
static size_t unmatched_patterns(const cli_check_options *o,
                                 const check_tally *t)
{
    size_t errors = 0;
    for (size_t i = 0; i < o->n_include; i++)
        if (!t->include_hit[i]) {
            fprintf(stderr, "pflref: check: --include %s: the pattern matched "
                            "no vector's id, id prefix or flag\n",
                    o->include[i]);
            errors++;
        }
    for (size_t i = 0; i < o->n_exclude; i++)
        if (!t->exclude_hit[i])
            fprintf(stderr, "pflref: check: note: --exclude %s: the pattern "
                            "matched no vector\n", o->exclude[i]);
    return errors;
}

/* A candidate file: its text and id. */
typedef struct {
    char *path;
    char *text;
    size_t len;
    char id[128];
    int duplicate;   /* another candidate has this id: neither is used */
} candidate;

/* Under --partial, the expected records that must be compared: at least
 * --partial-min's count, its fraction of what the vector expects (rounded
 * up), and one; 0 without --partial. */
static size_t partial_needed(const cli_check_options *o,
                             const pflref_golden_report *rep)
{
    if (!o->cmp.partial)
        return 0;
    size_t need = (size_t)ceil(o->partial_min_fraction *
                               (double)rep->expected_records);
    if (need < o->partial_min_count)
        need = o->partial_min_count;
    return need < 1 ? 1 : need;
}

/* The outcome of one pair into the tally, the entry and (text report) the
 * output; returns the entry's status. */
static const char *report_pair(pflref_status st, const pflref_error *err,
                               const pflref_golden_report *rep,
                               const char *vpath, const candidate *c,
                               const cli_check_options *o, const char *flags,
                               const char *replay, check_tally *tally,
                               json_t *entry)
{
    if (st != PFLREF_OK && rep->resync_refused) {
        /* state outside the records: this vector only is skipped, and
         * said so (err names the state), the others are still checked */
        tally->resync_skipped++;
        json_object_set_new(entry, "where", json_string(err->where));
        json_object_set_new(entry, "message", json_string(err->message));
        if (!o->json) {
            printf("SKIP %s: %s; not compared (check it without --resync)\n",
                   rep->id, err->message);
            cli_print_flags(flags);
        }
        return "skipped_resync";
    }
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
        if (!o->json) {
            printf("FAIL %s: the candidate reports outcome \"%s\", the vector "
                   "expects \"ok\"\n", rep->id, rep->outcome);
            cli_print_flags(flags);
            printf("  replay: %s\n", replay);
        }
        return "wrong_outcome";
    }
    /* too few records compared under --partial is a failure too; without
     * --partial-min so is a round of the expected trajectory of which the
     * candidate wrote nothing (a final-state-only candidate passes only
     * with an explicit --partial-min, which the report shows) */
    const size_t needed = partial_needed(o, rep);
    const int rounds_short = o->cmp.partial && !o->partial_min_given &&
                             rep->rounds_compared < rep->rounds_expected;
    const int pass = rep->mismatches == 0 && rep->quantities >= needed &&
                     !rounds_short;
    if (needed > 0)
        json_object_set_new(entry, "partial_rounds_short",
                            json_boolean(rounds_short));
    /* within tolerance, but records whose rounding spread reaches their
     * magnitude are no evidence: said so, never a silent pass */
    const int chaotic = pass && (rep->mca_chaotic > 0 || rep->mca_kinks > 0);
    if (chaotic)
        tally->inconclusive++;
    else if (pass)
        tally->passed++;
    else
        tally->mismatched++;
    cli_put_comparison(entry, rep, needed);
    if (!o->json && chaotic) {
        if (rep->mca_chaotic > 0)
            printf("INCONCLUSIVE %s: within the tolerance, but chaotic at "
                   "this precision\n", rep->id);
        else
            printf("INCONCLUSIVE %s: within the tolerance except at a kink "
                   "of the perturbed runs (reason: %s)\n", rep->id,
                   rep->mca_kink_reason);
        cli_print_mca(rep);
        cli_print_flags(flags);
        printf("  replay: %s\n", replay);
    } else if (!o->json && pass)
        cli_print_pass(rep, needed);
    else if (!o->json)
        cli_print_fail(rep, o->cmp.resync, needed, flags, replay);
    return chaotic ? "inconclusive" : pass ? "pass" : "mismatch";
}

/* The Monte Carlo options that differ from the defaults, for the replay
 * line (a static buffer). */
static const char *mca_replay(const pflref_check_options *c)
{
    static char buf[128];
    int n = 0;
    buf[0] = '\0';
    if (c->mca_runs > 0 && c->mca_runs != PFLREF_MCA_RUNS)
        n += snprintf(buf + n, sizeof buf - (size_t)n, " --mca-runs %zu",
                      c->mca_runs);
    if (c->mca_c > 0.0 && c->mca_c != PFLREF_MCA_C)
        n += snprintf(buf + n, sizeof buf - (size_t)n, " --mca-c %.17g",
                      c->mca_c);
    if (c->mca_seed != 0)
        snprintf(buf + n, sizeof buf - (size_t)n, " --mca-seed %llu",
                 (unsigned long long)c->mca_seed);
    return buf;
}

/* Compare one pair; print the text report or add to the JSON report. */
static void check_pair(const char *vpath, const char *vtext, size_t vlen,
                       const char *flags, const candidate *c,
                       const cli_check_options *o, check_tally *tally,
                       json_t *report)
{
    char dir[PFLREF_PATH_MAX];
    static char replay[2 * CLI_WORD_MAX + 256];
    static char vword[CLI_WORD_MAX], cword[CLI_WORD_MAX];
    pflref_file_folder(vpath, dir, sizeof dir);
    char partial_min[64] = "";
    if (o->partial_min_count > 0)
        snprintf(partial_min, sizeof partial_min, " --partial-min %zu",
                 o->partial_min_count);
    else if (o->partial_min_fraction > 0.0)
        snprintf(partial_min, sizeof partial_min, " --partial-min %.17g",
                 o->partial_min_fraction);
    char precision[160] = "";
    if (o->cmp.precision != PFLREF_PRECISION_FP64)
        snprintf(precision, sizeof precision,
                 " --candidate-precision %s%s", cli_precision_name(o->cmp.precision),
                 mca_replay(&o->cmp));
    snprintf(replay, sizeof replay, "%s check %s %s%s%s%s%s",
             cli_program_word(), cli_shell_word(vpath, vword),
             cli_shell_word(c->path, cword),
             o->cmp.resync ? " --resync" : "",
             o->cmp.partial ? " --partial" : "", partial_min, precision);
    pflref_error err;
    pflref_error_clear(&err);
    pflref_golden_report rep;
    /* the candidate's file references are relative to its own folder */
    char cdir[PFLREF_PATH_MAX];
    pflref_file_folder(c->path, cdir, sizeof cdir);
    pflref_status st = pflref_golden_check_at(vtext, vlen, dir, c->text,
                                              c->len, cdir, &o->cmp, &rep,
                                              &err);
    json_t *entry = json_object();
    json_object_set_new(entry, "id", json_string(rep.id[0] ? rep.id : c->id));
    json_object_set_new(entry, "expected", json_string(vpath));
    json_object_set_new(entry, "candidate", json_string(c->path));
    json_t *fl = json_array();
    for (const char *f = flags; *f != '\0';) {
        const size_t n = strcspn(f, " ");
        if (n > 0)
            json_array_append_new(fl, json_stringn(f, n));
        f += n + (f[n] == ' ');
    }
    json_object_set_new(entry, "flags", fl);
    const char *status = report_pair(st, &err, &rep, vpath, c, o, flags,
                                     replay, tally, entry);
    json_object_set_new(entry, "status", json_string(status));
    json_object_set_new(entry, "replay", json_string(replay));
    if (o->diagnose && strcmp(status, "mismatch") == 0) {
        /* which known variant the failing candidate computes instead */
        json_t *dg = cli_diagnose_pair(vtext, vlen, dir, c->text, c->len,
                                       cdir, &o->cmp, o->diagnose_budget,
                                       !o->json);
        if (dg != NULL)
            json_object_set_new(entry, "diagnosis", dg);
    }
    json_array_append_new(report, entry);
}

/* The id of a candidate (its JSON text at path) into c->id: 0, or −1
 * when the text is not JSON or its "id" is not a string (reported). */
static int candidate_id(const char *path, candidate *c)
{
    json_error_t je;
    json_t *root = json_loadb(c->text, c->len, 0, &je);
    if (root == NULL) {
        fprintf(stderr, "pflref: %s: not valid JSON: line %d, column %d: "
                        "%s\n", path, je.line, je.column, je.text);
        return -1;
    }
    const json_t *id = json_is_object(root) ? json_object_get(root, "id")
                                            : NULL;
    int rc = 0;
    if (id != NULL && !json_is_string(id)) {
        fprintf(stderr, "pflref: %s: id: expected a string (the golden "
                        "vector's id), found %s\n", path,
                json_is_integer(id) || json_is_real(id) ? "a number"
                : json_is_null(id) ? "null" : "another JSON value");
        rc = -1;
    }
    snprintf(c->id, sizeof c->id, "%s", id ? json_string_value(id) : "");
    if (json_string_value(id) == NULL)
        c->id[0] = '\0';
    json_decref(root);
    return rc;
}

/* Read every candidate result below path; a candidate whose id is not a
 * string is malformed, so is one without an id in folder mode, and two
 * candidates with one id (both named; neither is used). */
static candidate *read_candidates(const char *path, int folder_mode,
                                  size_t *count, check_tally *tally)
{
    cli_walk w;
    memset(&w, 0, sizeof w);
    tally->malformed += cli_walk_add(&w, path);
    cli_ids ids;
    memset(&ids, 0, sizeof ids);
    candidate *cs = calloc(w.paths.n ? w.paths.n : 1, sizeof *cs);
    size_t n = 0;
    for (size_t f = 0; cs != NULL && f < w.paths.n; f++) {
        candidate *c = &cs[n];
        const char *cpath = w.paths.items[f];
        pflref_error err;
        if (pflref_read_file(cpath, &c->text, &c->len, &err) != PFLREF_OK) {
            cli_fail(&err, cpath);
            tally->malformed++;
            continue;
        }
        int bad = candidate_id(cpath, c) != 0;
        if (!bad && folder_mode && c->id[0] == '\0') {
            fprintf(stderr, "pflref: %s: a candidate in a folder needs "
                            "\"id\" (the golden vector's id)\n", cpath);
            bad = 1;
        }
        if (!bad && folder_mode && !unique_id(&ids, c->id, cpath, "candidate")) {
            for (size_t k = 0; k < n; k++)
                cs[k].duplicate |= strcmp(cs[k].id, c->id) == 0;
            bad = 1;
        }
        if (bad) {
            tally->malformed++;
            free(c->text);
            c->text = NULL;
            continue;
        }
        c->path = w.paths.items[f];
        w.paths.items[f] = NULL;
        n++;
    }
    cli_ids_free(&ids);
    cli_walk_free(&w);
    *count = n;
    return cs;
}

/* Check the vector at vpath against its candidate among cands (in folder
 * mode the one with the vector's id, else the only one), if the filters
 * select it.  Two vectors with one id are an error naming both. */
static void check_vector(const char *vpath, int named, int folder_mode,
                         const candidate *cands, size_t nc,
                         const cli_check_options *o, check_tally *tally,
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
    } else if (!unique_id(&tally->vector_ids, id, vpath, "vector")) {
        tally->malformed++;
    } else if (selected(o, id, flags, tally)) {
        const candidate *match = NULL;
        for (size_t k = 0; k < nc && match == NULL; k++)
            if (!folder_mode || strcmp(cands[k].id, id) == 0)
                match = &cands[k];
        if (match == NULL)
            tally->skipped++;
        else if (!match->duplicate)
            check_pair(vpath, text, len, flags, match, o, tally, report);
    }
    free(text);
}

/* The summary (and with --json the whole report) on standard output. */
static void print_summary(const cli_check_options *o, const check_tally *t,
                          int rc, json_t *report)
{
    if (o->json) {
        json_t *root = json_object(), *sum = json_object();
        json_object_set_new(root, "format",
                            json_string("pflref-check-report/1"));
        json_object_set_new(sum, "compared", cli_count_json(t->compared));
        json_object_set_new(sum, "passed", cli_count_json(t->passed));
        json_object_set_new(sum, "numeric_mismatches",
                            cli_count_json(t->mismatched));
        json_object_set_new(sum, "wrong_outcome", cli_count_json(t->wrong_outcome));
        json_object_set_new(sum, "malformed", cli_count_json(t->malformed));
        json_object_set_new(sum, "skipped_no_candidate", cli_count_json(t->skipped));
        json_object_set_new(sum, "skipped_resync",
                            cli_count_json(t->resync_skipped));
        json_object_set_new(sum, "inconclusive",
                            cli_count_json(t->inconclusive));
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
           "candidate)", t->compared, t->passed, t->mismatched,
           t->wrong_outcome, t->malformed, t->skipped);
    if (o->cmp.resync)
        printf(", %zu skipped (cannot be re-synchronised)",
               t->resync_skipped);
    if (o->cmp.precision != PFLREF_PRECISION_FP64)
        printf("; %zu inconclusive (chaotic at %s)", t->inconclusive,
               cli_precision_name(o->cmp.precision));
    printf("\n");
    if (t->inconclusive > 0)
        fprintf(stderr, "pflref: check: note: %zu vectors inconclusive at "
                        "%s: records chaotic under its rounding, no "
                        "evidence either way (INCONCLUSIVE lines)\n",
                t->inconclusive, cli_precision_name(o->cmp.precision));
    if (rc == EXIT_NOTHING && t->compared == 0)
        fprintf(stderr, "pflref: check: no vector was compared; nothing "
                        "checked is a failure\n");
    else if (rc == EXIT_NOTHING)
        fprintf(stderr, "pflref: check: %zu vectors compared, fewer than "
                        "--min-vectors %zu\n", t->compared, o->min_vectors);
}

int cli_check(int argc, char **argv)
{
    cli_check_options o;
    const char *epath, *cpath;
    cli_progress prog;
    cli_progress_start(&prog, "check", 0, cli_progress_take_quiet(&argc, argv));
    int rc = cli_check_parse(argc, argv, &o, &epath, &cpath);
    if (rc != EXIT_OK)
        return rc;
    check_tally tally;
    memset(&tally, 0, sizeof tally);
    const int folder_mode = cli_is_dir(epath) || cli_is_dir(cpath);
    size_t nc = 0;
    candidate *cands = read_candidates(cpath, folder_mode, &nc, &tally);
    cli_walk vectors;
    memset(&vectors, 0, sizeof vectors);
    tally.malformed += cli_walk_add(&vectors, epath);
    json_t *report = json_array();
    for (size_t f = 0; cands != NULL && f < vectors.paths.n; f++) {
        cli_progress_item(&prog, "file", f, vectors.paths.n);
        check_vector(vectors.paths.items[f], !cli_is_dir(epath), folder_mode,
                     cands, nc, &o, &tally, report);
    }
    cli_progress_end(&prog);
    tally.malformed += unmatched_patterns(&o, &tally);
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
    cli_ids_free(&tally.vector_ids);
    cli_walk_free(&vectors);
    return rc;
}
