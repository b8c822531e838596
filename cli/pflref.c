/* cli/pflref.c: the pflref command line (docs/cli.md).
 *
 *   pflref run SPEC [-o RESULT] [--trace]
 *   pflref table [--metric NAME] COLUMN=RESULT:LABEL ...
 *   pflref verify PATH...
 *   pflref list
 *   pflref --help | --version
 *
 * Glue only: argument parsing, reading and writing files, printing, exit
 * codes.  Exit codes: 0 ok, 1 mismatch, 2 usage or invalid input (also
 * unreadable or unwritable files and sizes beyond the limits), 3
 * algorithmic failure (divergence), 4 nothing ran, 5 internal error.
 * No output file is ever left partial: results are written to a temporary
 * file and renamed.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <gsl/gsl_errno.h>
#include "pflref.h"

enum {
    EXIT_OK = 0,
    EXIT_MISMATCH = 1,
    EXIT_USAGE = 2,
    EXIT_DIVERGED = 3,
    EXIT_NOTHING = 4,
    EXIT_INTERNAL = 5
};

static const char USAGE[] =
    "usage: pflref run SPEC [-o RESULT] [--trace]\n"
    "       pflref table [--metric NAME] COLUMN=RESULT:LABEL ...\n"
    "       pflref verify PATH...\n"
    "       pflref list\n"
    "       pflref --help | --version\n"
    "\n"
    "  run    run the algorithm a spec describes; write the result to RESULT\n"
    "         (or standard output).  --trace prints every step to standard\n"
    "         error, the way the worked examples are written.\n"
    "  table  print a per-client table of one metric (default test_mse) from\n"
    "         results, one column per COLUMN=RESULT:LABEL, where LABEL is a\n"
    "         model the result reports (global, local, personalized), with\n"
    "         mean and worst rows.\n"
    "  verify re-run every golden vector (pflref-golden/1) found in the\n"
    "         files and folders given (recursively) through the reference and\n"
    "         compare it with its frozen expectation.\n"
    "  list   list the algorithms, models, hyperparameters and switches.\n"
    "\n"
    "exit status: 0 ok, 1 mismatch, 2 usage or invalid input, 3 numerical\n"
    "             divergence, 4 nothing to verify, 5 internal error.  docs/cli.md has the details.\n";

static int exit_code(pflref_status st)
{
    switch (st) {
    case PFLREF_OK:       return EXIT_OK;
    case PFLREF_EDIVERGE: return EXIT_DIVERGED;
    case PFLREF_EINTERNAL:return EXIT_INTERNAL;
    default:              return EXIT_USAGE;
    }
}

static int fail(const pflref_error *err, const char *context)
{
    if (err->where[0] != '\0')
        fprintf(stderr, "pflref: %s: %s: %s\n", context, err->where,
                err->message);
    else
        fprintf(stderr, "pflref: %s: %s\n", context, err->message);
    return exit_code(err->status);
}

static int usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "pflref: %s%s%s\n%s", msg, arg ? ": " : "",
            arg ? arg : "", USAGE);
    return EXIT_USAGE;
}

/* ---- trace printing ---------------------------------------------------- */

static void print_vector(FILE *f, const double *x, size_t n)
{
    const size_t shown = n <= 8 ? n : 6;
    fputc('[', f);
    for (size_t j = 0; j < shown; j++)
        fprintf(f, "%s%.10g", j ? ", " : "", x[j]);
    if (shown < n)
        fprintf(f, ", … (%zu entries)", n);
    fputc(']', f);
}

static void print_event(void *ctx, const pflref_event *ev)
{
    FILE *f = ctx;
    switch (ev->kind) {
    case PFLREF_EV_ROUND_BEGIN:
        fprintf(f, "round %ld: %s = ", ev->round, ev->name);
        break;
    case PFLREF_EV_CLIENT_BEGIN:
        if (ev->round >= 0)
            fprintf(f, "  client %ld starts: %s = ", ev->client, ev->name);
        else
            fprintf(f, "%s, client %ld starts: %s = ", ev->phase, ev->client,
                    ev->name);
        break;
    case PFLREF_EV_STEP:
        fprintf(f, "    step %ld: %s = ", ev->step, ev->name);
        break;
    case PFLREF_EV_CLIENT_END:
        fprintf(f, "  client %ld ends: %s = ", ev->client, ev->name);
        break;
    case PFLREF_EV_SERVER:
        fprintf(f, "  server: %s = ", ev->name);
        break;
    case PFLREF_EV_NOTE:
        fprintf(f, "  %s = ", ev->name);
        break;
    case PFLREF_EV_FINAL:
        if (ev->client >= 0)
            fprintf(f, "final: client %ld: %s = ", ev->client, ev->name);
        else
            fprintf(f, "final: %s = ", ev->name);
        break;
    }
    print_vector(f, ev->value, ev->len);
    /* The paper line once per client (first step) and at the server. */
    if (ev->formula != NULL &&
        (ev->kind != PFLREF_EV_STEP || ev->step == 1))
        fprintf(f, "    [%s]", ev->formula);
    fputc('\n', f);
}

/* ---- run --------------------------------------------------------------- */

static int cmd_run(int argc, char **argv)
{
    const char *spec_path = NULL, *out_path = NULL;
    int trace_on = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--trace") == 0)
            trace_on = 1;
        else if (strcmp(argv[i], "-o") == 0) {
            if (i + 1 >= argc)
                return usage_error("-o needs a file name", NULL);
            out_path = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1] != '\0')
            return usage_error("unknown option", argv[i]);
        else if (spec_path == NULL)
            spec_path = argv[i];
        else
            return usage_error("run takes one spec", argv[i]);
    }
    if (spec_path == NULL)
        return usage_error("run needs a spec file", NULL);

    pflref_error err;
    pflref_error_clear(&err);
    pflref_spec *spec = NULL;
    if (pflref_spec_read_file(spec_path, &spec, &err) != PFLREF_OK)
        return fail(&err, spec_path);

    pflref_trajectory tj;
    pflref_trajectory_init(&tj, spec->record);
    pflref_trace recorder = {pflref_trajectory_emit, &tj};
    pflref_trace printer = {print_event, stderr};
    pflref_trace_tee tee = {&recorder, trace_on ? &printer : NULL};
    pflref_trace trace = {pflref_trace_tee_emit, &tee};

    pflref_run_result *res = NULL;
    pflref_status st = pflref_run(spec->problem, spec->algorithm, &spec->hyper,
                                  spec->schedule, spec->w0, &trace, &res,
                                  &err);
    char *text = NULL;
    if (st == PFLREF_OK) {
        pflref_build_info bi;
        pflref_build_info_get(&bi);
        st = pflref_result_to_json(spec, res, &tj, &bi, &text, &err);
    }
    if (st == PFLREF_OK) {
        if (out_path != NULL)
            st = pflref_write_file_atomic(out_path, text, &err);
        else if (fputs(text, stdout) == EOF || fputc('\n', stdout) == EOF ||
                 fflush(stdout) != 0)
            st = pflref_error_set(&err, PFLREF_EIO, "stdout",
                                  "cannot write the result");
    }
    free(text);
    pflref_run_result_free(res);
    pflref_trajectory_free(&tj);
    pflref_spec_free(spec);
    return st == PFLREF_OK ? EXIT_OK : fail(&err, spec_path);
}

/* ---- table ------------------------------------------------------------- */

#define MAX_COLUMNS 16

static int cmd_table(int argc, char **argv)
{
    const char *metric = "test_mse";
    char *heads[MAX_COLUMNS];
    double *vals[MAX_COLUMNS] = {NULL};
    pflref_summary sums[MAX_COLUMNS];
    size_t ncol = 0, N = 0;
    int rc = EXIT_OK;
    pflref_error err;
    pflref_error_clear(&err);

    for (int i = 0; i < argc && rc == EXIT_OK; i++) {
        if (strcmp(argv[i], "--metric") == 0) {
            if (i + 1 >= argc)
                return usage_error("--metric needs a name", NULL);
            metric = argv[++i];
            continue;
        }
        /* COLUMN=RESULT:LABEL */
        char *eq = strchr(argv[i], '=');
        char *colon = strrchr(argv[i], ':');
        if (eq == NULL || colon == NULL || colon < eq) {
            rc = usage_error("expected COLUMN=RESULT:LABEL", argv[i]);
            break;
        }
        if (ncol == MAX_COLUMNS) {
            rc = usage_error("too many columns (at most 16)", argv[i]);
            break;
        }
        *eq = '\0';
        *colon = '\0';
        heads[ncol] = argv[i];
        const char *path = eq + 1, *label = colon + 1;
        char *text;
        size_t len, n;
        pflref_status st = pflref_read_file(path, &text, &len, &err);
        if (st == PFLREF_OK) {
            st = pflref_result_read_metric(text, len, label, metric,
                                           &vals[ncol], &n, &sums[ncol], &err);
            free(text);
        }
        if (st != PFLREF_OK) {
            rc = fail(&err, path);
            break;
        }
        if (ncol > 0 && n != N) {
            fprintf(stderr, "pflref: %s: %zu clients, the first column has "
                            "%zu\n", path, n, N);
            rc = EXIT_USAGE;
            break;
        }
        N = n;
        ncol++;
    }
    if (rc == EXIT_OK && ncol == 0)
        rc = usage_error("table needs at least one column", NULL);
    if (rc == EXIT_OK) {
        int width[MAX_COLUMNS];
        printf("%s: %s\nclient ", metric, "per client, then mean and worst");
        for (size_t c = 0; c < ncol; c++) {
            size_t w = strlen(heads[c]);
            width[c] = w > 8 ? (int)w : 8;
            printf("| %*s ", width[c], heads[c]);
        }
        printf("\n");
        for (size_t i = 0; i < N; i++) {
            printf("%6zu ", i);
            for (size_t c = 0; c < ncol; c++)
                printf("| %*.3f ", width[c], vals[c][i]);
            printf("\n");
        }
        printf("  mean ");
        for (size_t c = 0; c < ncol; c++)
            printf("| %*.3f ", width[c], sums[c].mean);
        printf("\n worst ");
        for (size_t c = 0; c < ncol; c++)
            printf("| %*.3f ", width[c], sums[c].worst);
        printf("\n");
    }
    for (size_t c = 0; c < ncol; c++)
        free(vals[c]);
    return rc;
}

/* ---- reports ----------------------------------------------------------- */

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
    else
        printf(")[%zu]: expected %.17g, got %.17g\n", d->index, d->expected,
               d->got);
}

/* ---- verify ------------------------------------------------------------ */

typedef struct {
    size_t passed, failed, errors;
    size_t numbers;
} verify_tally;

static void verify_file(const char *path, verify_tally *tally)
{
    pflref_error err;
    pflref_error_clear(&err);
    char *text;
    size_t len;
    if (pflref_read_file(path, &text, &len, &err) != PFLREF_OK) {
        fail(&err, path);
        tally->errors++;
        return;
    }
    if (!pflref_golden_is_vector(text, len)) {
        free(text);
        return;   /* problem files and specs live beside the vectors */
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash != NULL)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    pflref_golden_report rep;
    pflref_status st = pflref_golden_verify(text, len, dir, &rep, &err);
    free(text);
    if (st != PFLREF_OK) {
        fail(&err, path);
        tally->errors++;
        return;
    }
    tally->numbers += rep.numbers;
    if (rep.mismatches == 0) {
        tally->passed++;
        return;
    }
    tally->failed++;
    printf("FAIL %s: %zu of %zu quantities differ; first divergence: ",
           rep.id, rep.mismatches, rep.quantities);
    print_divergence(&rep.first, "the reference");
    printf("  replay: pflref verify %s\n", path);
}

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static void verify_path(const char *path, verify_tally *tally)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        fprintf(stderr, "pflref: %s: no such file or folder\n", path);
        tally->errors++;
        return;
    }
    if (!S_ISDIR(sb.st_mode)) {
        verify_file(path, tally);
        return;
    }
    struct dirent **names;
    int n = scandir(path, &names, NULL, alphasort);   /* sorted: stable order */
    if (n < 0) {
        fprintf(stderr, "pflref: %s: cannot read the folder\n", path);
        tally->errors++;
        return;
    }
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        if (name[0] != '.') {
            size_t len = strlen(path) + strlen(name) + 2;
            char *child = malloc(len);
            if (child != NULL) {
                snprintf(child, len, "%s/%s", path, name);
                struct stat cb;
                if (stat(child, &cb) == 0 &&
                    (S_ISDIR(cb.st_mode) || has_suffix(name, ".json")))
                    verify_path(child, tally);
                free(child);
            } else {
                tally->errors++;
            }
        }
        free(names[i]);
    }
    free(names);
}

static int cmd_verify(int argc, char **argv)
{
    if (argc == 0)
        return usage_error("verify needs a file or folder", NULL);
    verify_tally tally = {0, 0, 0, 0};
    for (int i = 0; i < argc; i++)
        verify_path(argv[i], &tally);
    printf("verify: %zu vectors reproduced, %zu failed, %zu malformed or "
           "not run (%zu numbers compared)\n", tally.passed, tally.failed,
           tally.errors, tally.numbers);
    if (tally.errors > 0)
        return EXIT_USAGE;
    if (tally.failed > 0)
        return EXIT_MISMATCH;
    if (tally.passed == 0) {
        fprintf(stderr, "pflref: verify: no golden vector found\n");
        return EXIT_NOTHING;
    }
    return EXIT_OK;
}

/* ---- list -------------------------------------------------------------- */

static int cmd_list(void)
{
    size_t na, np;
    const pflref_algorithm *const *algs = pflref_algorithms(&na);
    const pflref_param *params = pflref_params(&np);
    printf("algorithms:\n");
    for (size_t i = 0; i < na; i++) {
        printf("  %-10s %s\n             reports:", algs[i]->name,
               algs[i]->title);
        for (size_t e = 0; e < algs[i]->n_eval; e++)
            printf(" %s", algs[i]->eval[e].label);
        printf("\n");
    }
    printf("models:\n"
           "  quadratic  f(w) = ½ Σ_j a_j (w_j − c_j)²      blocks: w\n"
           "  linear     loss squared | half_squared, bias optional"
           "      blocks: w, b\n"
           "  softmax    cross-entropy, bias optional       blocks: W, b\n"
           "  mlp        one ReLU hidden layer, cross-entropy"
           "  blocks: W1, b1, W2, b2\n"
           "  split groups: input, head\n");
    printf("hyperparameters:\n");
    for (size_t i = 0; i < np; i++) {
        const pflref_param *p = &params[i];
        if (p->type != PFLREF_PARAM_REAL)
            continue;
        printf("  %-16s %-5s %s (%s %g) [%s]%s\n", p->name, p->symbol, p->doc,
               p->lo_open ? ">" : ">=", p->lo, p->algorithms,
               p->required_by[0] ? " required" : "");
    }
    printf("switches (paper default first):\n");
    for (size_t i = 0; i < np; i++) {
        const pflref_param *p = &params[i];
        if (p->type != PFLREF_PARAM_ENUM)
            continue;
        printf("  %-16s ", p->name);
        for (size_t k = 0; p->values[k] != NULL; k++)
            printf("%s%s", k ? "|" : "", p->values[k]);
        printf("\n                   %s [%s]\n", p->doc, p->algorithms);
    }
    printf("samplers: gsl | numpy_legacy    batches: split_once | reshuffle\n");
    return EXIT_OK;
}

int main(int argc, char **argv)
{
    pflref_blas_pin_threads();
    /* GSL's default handler aborts; pflref checks every GSL status itself. */
    gsl_set_error_handler_off();
    if (argc < 2)
        return usage_error("no command", NULL);
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
        strcmp(cmd, "help") == 0) {
        fputs(USAGE, stdout);
        return EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        pflref_build_info bi;
        pflref_build_info_get(&bi);
        printf("pflref %s (%s; %s)\n", bi.version, bi.compiler, bi.blas);
        return EXIT_OK;
    }
    if (strcmp(cmd, "run") == 0)
        return cmd_run(argc - 2, argv + 2);
    if (strcmp(cmd, "table") == 0)
        return cmd_table(argc - 2, argv + 2);
    if (strcmp(cmd, "verify") == 0)
        return cmd_verify(argc - 2, argv + 2);
    if (strcmp(cmd, "list") == 0)
        return argc == 2 ? cmd_list() : usage_error("list takes no arguments",
                                                     NULL);
    return usage_error("unknown command", cmd);
}
