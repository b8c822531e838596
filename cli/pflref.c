/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cli/pflref.c: the pflref command line (docs/cli.md).
 *
 *   pflref run SPEC [-o RESULT] [--arrays inline|files] [--inline-max N]
 *              [--trace] [--quiet]
 *   pflref table [--metric NAME] COLUMN=RESULT:LABEL ...
 *   pflref verify PATH...
 *   pflref check EXPECTED CANDIDATE [options]
 *   pflref freeze SPEC -o VECTOR [--atol A --rtol R --basis TEXT] [--id ID]
 *                 [--trajectory step|round|none]
 *   pflref list
 *   pflref --help | --version
 *
 * Glue only: argument parsing, reading and writing files, printing, exit
 * codes.  Exit codes: 0 ok, 1 mismatch, 2 usage or invalid input (also
 * unreadable or unwritable files and sizes beyond the limits), 3
 * algorithmic failure (divergence), 4 nothing ran, 5 internal error.
 * No output file is ever left partial: every file goes through the one
 * writer (pflref_write_file_with: a temporary file, renamed whole); "-o -"
 * and "-o /dev/stdout" are standard output (cli_write_output).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_errno.h>
#include <jansson.h>
#include "cli.h"

/* ---- trace printing ---------------------------------------------------- */

/* Each value as the shortest text that reads back to it (pflref/dtoa.h:
 * Python's repr, so 2.0, 0.1, 1e-05; nan or inf where a run diverged);
 * a vector of more than 8 entries is cut to its first 6. */
static void print_vector(FILE *f, const double *x, size_t n)
{
    const size_t shown = n <= 8 ? n : 6;
    char text[PFLREF_DTOA_MAX];
    fputc('[', f);
    for (size_t j = 0; j < shown; j++) {
        pflref_dtoa(x[j], text);
        fprintf(f, "%s%s", j ? ", " : "", text);
    }
    if (shown < n)
        fprintf(f, ", … (%zu entries)", n);
    fputc(']', f);
}

/* The last formula printed for each step name of the current client (the
 * CLI is single-threaded; reset when a client starts). */
#define TRACE_NAMES 4
static struct {
    const char *name;
    const char *formula;
} last_step[TRACE_NAMES];

static int step_formula_changed(const pflref_event *ev)
{
    size_t j = 0;
    while (j < TRACE_NAMES && last_step[j].name != NULL &&
           strcmp(last_step[j].name, ev->name) != 0)
        j++;
    if (j == TRACE_NAMES)
        return ev->step == 1;
    int changed = last_step[j].formula == NULL ||
                  strcmp(last_step[j].formula, ev->formula) != 0;
    last_step[j].name = ev->name;
    last_step[j].formula = ev->formula;
    return changed;
}

static void print_event(void *ctx, const pflref_event *ev)
{
    FILE *f = ctx;
    if (ev->kind == PFLREF_EV_CLIENT_BEGIN)
        memset(last_step, 0, sizeof last_step);
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
    case PFLREF_EV_INTERMEDIATE:   /* printed only: no record keeps it */
        if (ev->client >= 0)
            fprintf(f, "  (client %ld) %s = ", ev->client, ev->name);
        else
            fprintf(f, "  (server) %s = ", ev->name);
        break;
    case PFLREF_EV_FINAL:
        if (ev->client >= 0)
            fprintf(f, "final: client %ld: %s = ", ev->client, ev->name);
        else
            fprintf(f, "final: %s = ", ev->name);
        break;
    }
    print_vector(f, ev->value, ev->len);
    /* The paper line at the server and notes, and for a client's steps of
     * one name whenever it changes (FedAlt's v steps, then its u steps). */
    if (ev->formula != NULL &&
        (ev->kind != PFLREF_EV_STEP || step_formula_changed(ev)))
        fprintf(f, "    [%s]", ev->formula);
    fputc('\n', f);
}

/* ---- run --------------------------------------------------------------- */

/* The problem file a spec (or a vector's spec) names, resolved as the
 * spec reader resolves it, into full; 0 when it names none. */
static int problem_file(const char *text, size_t len, const char *dir,
                        char *full, size_t size)
{
    json_t *root = json_loadb(text, len, 0, NULL);
    const json_t *spec = json_object_get(root, "spec");
    const json_t *prob = json_object_get(spec != NULL ? spec : root, "problem");
    const char *file = json_string_value(json_object_get(prob, "file"));
    if (file != NULL && (file[0] == '/' || dir[0] == '\0'))
        snprintf(full, size, "%s", file);
    else if (file != NULL)
        snprintf(full, size, "%s/%s", dir, file);
    json_decref(root);
    return file != NULL;
}

/* -o must not name a file the run reads (the same device and inode, also
 * through a symbolic or hard link): the spec, or its problem file; `what`
 * names the output in the message ("result", "vector").  Returns EXIT_OK,
 * or the error printed. */
int cli_output_is_input(const char *out_path, const char *what,
                        const char *spec_path, const pflref_file_id *spec_id,
                        const char *text, size_t len, const char *dir)
{
    pflref_file_id out, prob;
    char full[PFLREF_PATH_MAX];
    if (out_path == NULL || cli_is_stdout(out_path) ||
        !pflref_file_identify(out_path, &out))
        return EXIT_OK;
    const char *input = NULL, *named = NULL;
    if (out.dev == spec_id->dev && out.ino == spec_id->ino) {
        input = "the spec";
        named = spec_path;
    } else if (problem_file(text, len, dir, full, sizeof full) &&
               pflref_file_identify(full, &prob) && out.dev == prob.dev &&
               out.ino == prob.ino) {
        input = "the spec's problem file";
        named = full;
    }
    if (input == NULL)
        return EXIT_OK;
    fprintf(stderr, "pflref: %s: -o %s is %s %s (one file): the %s "
                    "would overwrite an input; write it elsewhere\n",
            spec_path, out_path, input, named, what);
    return EXIT_USAGE;
}

static int cmd_run(int argc, char **argv)
{
    const char *spec_path = NULL, *out_path = NULL;
    int trace_on = 0, rc;
    pflref_output_override over = {.set_form = 0, .set_inline_max = 0};
    const int quiet = cli_progress_take_quiet(&argc, argv);
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--trace") == 0)
            trace_on = 1;
        else if (strcmp(argv[i], "-o") == 0) {
            if (i + 1 >= argc)
                return cli_usage_error("-o needs a file name", NULL);
            out_path = argv[++i];
        } else if (strcmp(argv[i], "--arrays") == 0 ||
                   strcmp(argv[i], "--inline-max") == 0) {
            if (i + 1 >= argc)
                return cli_usage_error(argv[i][2] == 'a'
                                           ? "--arrays needs inline or files"
                                           : "--inline-max needs a count",
                                       NULL);
            if ((rc = cli_run_output_option(argv[i], argv[i + 1], &over)))
                return rc;
            i++;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cli_usage_error("unknown option", argv[i]);
        else if (spec_path == NULL)
            spec_path = argv[i];
        else
            return cli_usage_error("run takes one spec", argv[i]);
    }
    if (spec_path == NULL)
        return cli_usage_error("run needs a spec file", NULL);

    pflref_error err;
    pflref_error_clear(&err);
    /* SPEC is a spec, or a golden vector whose embedded spec is run (the
     * result then carries the vector's id, so it is a candidate for
     * `pflref check`). */
    char *text, *result = NULL;
    size_t len;
    pflref_file_id spec_id;
    if (pflref_read_file_id(spec_path, &text, &len, &spec_id, &err) !=
        PFLREF_OK)
        return cli_fail(&err, spec_path);
    char dir[PFLREF_PATH_MAX];
    pflref_file_folder(spec_path, dir, sizeof dir);
    rc = cli_output_is_input(out_path, "result", spec_path, &spec_id, text,
                             len, dir);
    if (rc == EXIT_OK && out_path != NULL &&
        cli_check_output(out_path, &err) != PFLREF_OK)
        rc = cli_fail(&err, spec_path);   /* refused before the run */
    if (rc != EXIT_OK) {
        free(text);
        return rc;
    }
    pflref_trace printer = {print_event, stderr};
    /* the progress line on a terminal (not with --trace, cli/progress.c) */
    cli_progress prog;
    cli_progress_start(&prog, "run", cli_progress_rounds(text, len),
                       quiet || trace_on);
    pflref_trace progress = {cli_progress_emit, &prog};
    /* without -o, or with -o - (or /dev/stdout): the text, then standard
     * output, one line (the files form is refused there, before the run);
     * otherwise the library writes the file, which holds the result's text
     * alone, its arrays in STEM.arrays/ in the files form */
    const int to_stdout = out_path == NULL || cli_is_stdout(out_path);
    pflref_status st = pflref_spec_run_output(
        text, len, dir, prog.on ? &progress : trace_on ? &printer : NULL,
        &over, to_stdout ? NULL : out_path, &result, &err);
    cli_progress_end(&prog);
    free(text);
    if (st == PFLREF_OK && to_stdout)
        st = cli_write_text("-", result, "\n", &err);
    free(result);
    return st == PFLREF_OK ? EXIT_OK : cli_fail(&err, spec_path);
}

/* ---- table ------------------------------------------------------------- */

#define MAX_COLUMNS 16

/* The columns read so far: heads, per-client values, summaries. */
typedef struct {
    size_t ncol, N;                  /* columns; clients in each        */
    char *heads[MAX_COLUMNS];
    double *vals[MAX_COLUMNS];       /* N values each                   */
    pflref_summary sums[MAX_COLUMNS];
} table;

/* Read the column arg = COLUMN=RESULT:LABEL of `metric` into t (arg is
 * cut into its parts); returns an exit code. */
static int add_column(table *t, char *arg, const char *metric)
{
    char *eq = strchr(arg, '=');
    char *colon = strrchr(arg, ':');
    if (eq == NULL || colon == NULL || colon < eq)
        return cli_usage_error("expected COLUMN=RESULT:LABEL", arg);
    if (t->ncol == MAX_COLUMNS)
        return cli_usage_error("too many columns (at most 16)", arg);
    *eq = '\0';
    *colon = '\0';
    const char *path = eq + 1, *label = colon + 1;
    size_t n;
    double *vals;
    int rc = cli_read_metric_column(path, label, metric, &vals, &n,
                                    &t->sums[t->ncol]);
    if (rc != 0)
        return rc;
    if (t->ncol > 0 && n != t->N) {
        fprintf(stderr, "pflref: %s: %zu clients, the first column has "
                        "%zu\n", path, n, t->N);
        free(vals);
        return EXIT_USAGE;
    }
    t->heads[t->ncol] = arg;
    t->vals[t->ncol++] = vals;
    t->N = n;
    return EXIT_OK;
}

/* One row per client, then the mean and worst rows. */
static void print_table(const table *t, const char *metric)
{
    int width[MAX_COLUMNS];
    printf("%s: %s\nclient ", metric, "per client, then mean and worst");
    for (size_t c = 0; c < t->ncol; c++) {
        size_t w = strlen(t->heads[c]);
        width[c] = w > 8 ? (int)w : 8;
        printf("| %*s ", width[c], t->heads[c]);
    }
    printf("\n");
    for (size_t i = 0; i < t->N; i++) {
        printf("%6zu ", i);
        for (size_t c = 0; c < t->ncol; c++)
            printf("| %*.3f ", width[c], t->vals[c][i]);
        printf("\n");
    }
    printf("  mean ");
    for (size_t c = 0; c < t->ncol; c++)
        printf("| %*.3f ", width[c], t->sums[c].mean);
    printf("\n worst ");
    for (size_t c = 0; c < t->ncol; c++)
        printf("| %*.3f ", width[c], t->sums[c].worst);
    printf("\n");
}

static int cmd_table(int argc, char **argv)
{
    const char *metric = "test_mse";
    table t = {.ncol = 0, .N = 0};
    int rc = EXIT_OK;
    for (int i = 0; i < argc && rc == EXIT_OK; i++) {
        if (strcmp(argv[i], "--metric") != 0)
            rc = add_column(&t, argv[i], metric);
        else if (i + 1 < argc)
            metric = argv[++i];
        else
            rc = cli_usage_error("--metric needs a name", NULL);
    }
    if (rc == EXIT_OK && t.ncol == 0)
        rc = cli_usage_error("table needs at least one column", NULL);
    if (rc == EXIT_OK)
        print_table(&t, metric);
    for (size_t c = 0; c < t.ncol; c++)
        free(t.vals[c]);
    return rc;
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
           "  mlp        one hidden layer (relu | identity), cross-entropy"
           " | squared | half_squared  blocks: W1, b1, W2, b2\n"
           "             option bn (bn_eps ε, bn_momentum ρ): batch"
           " normalisation after W1 x + b1,\n"
           "             blocks W1, b1, bn_gamma, bn_beta, bn_running_mean,"
           " bn_running_var (buffers), W2, b2\n"
           "  adapters   (algorithm lora) linear, softmax, mlp, layers: W ="
           " W₀ + (α/r) B A on w, W, W1, W2, dense and\n"
           "             conv2d weights (lora.targets, or init.lora_targets"
           " by name),\n"
           "             adapter q (init.lora): per target lora_A (r × d),"
           " lora_B (k × r), row-major\n"
           "  split groups: input, head\n");
    printf("hyperparameters:\n");
    for (size_t i = 0; i < np; i++) {
        const pflref_param *p = &params[i];
        if (p->type == PFLREF_PARAM_ENUM)
            continue;
        /* pad the symbol to 5 characters, not bytes (η is two bytes) */
        int pad = 5;
        for (const char *c = p->symbol; *c != '\0'; c++)
            pad -= ((unsigned char)*c & 0xC0) != 0x80;
        printf("  %-16s %s%*s %s (%s %g%s) [%s]%s\n", p->name, p->symbol,
               pad > 0 ? pad : 0, "", p->doc, p->lo_open ? ">" : ">=", p->lo,
               p->type == PFLREF_PARAM_INT ? ", integer" : "", p->algorithms,
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
    size_t npre;
    const pflref_preset *pre = pflref_presets(&npre);
    printf("presets (besides paper, every algorithm's default):\n");
    for (size_t i = 0; i < npre; i++)
        printf("  %s/%s: %s%s%s%s\n                   from %s\n",
               pre[i].algorithm, pre[i].name, pre[i].settings,
               pre[i].split != NULL ? " (personal: " : "",
               pre[i].split != NULL ? pre[i].split : "",
               pre[i].split != NULL ? ")" : "", pre[i].source);
    printf("samplers: gsl | numpy_legacy    batches: split_once | reshuffle\n");
    return EXIT_OK;
}

int main(int argc, char **argv)
{
    pflref_blas_pin_threads();
    /* GSL's default handler aborts; pflref checks every GSL status itself. */
    gsl_set_error_handler_off();
    cli_set_program(argv[0]);   /* for the replay lines of verify, check */
    if (argc < 2)
        return cli_usage_error("no command", NULL);
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
        strcmp(cmd, "help") == 0) {
        fputs(CLI_USAGE, stdout);
        fputs(CLI_HELP, stdout);
        return EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        pflref_build_info bi;
        pflref_build_info_get(&bi);
        printf("pflref %s (%s; %s)\n", pflref_version(), bi.compiler,
               bi.blas);
        return EXIT_OK;
    }
    if (cli_asks_help(argc - 2, argv + 2))
        return cli_command_help(cmd);
    if (strcmp(cmd, "run") == 0)
        return cmd_run(argc - 2, argv + 2);
    if (strcmp(cmd, "table") == 0)
        return cmd_table(argc - 2, argv + 2);
    if (strcmp(cmd, "verify") == 0)
        return cli_verify(argc - 2, argv + 2);
    if (strcmp(cmd, "freeze") == 0)
        return cli_freeze(argc - 2, argv + 2);
    if (strcmp(cmd, "diagnose") == 0)
        return cli_diagnose(argc - 2, argv + 2);
    if (strcmp(cmd, "check") == 0)
        return cli_check(argc - 2, argv + 2);
    if (strcmp(cmd, "list") == 0 && argc > 2 &&
        strcmp(argv[2], "--variants") == 0)
        return cli_list_variants(argc - 3, argv + 3);
    if (strcmp(cmd, "plot") == 0)
        return cli_plot(argc - 2, argv + 2);
    if (strcmp(cmd, "list") == 0)
        return argc == 2 ? cmd_list() : cli_usage_error("list takes no arguments",
                                                     NULL);
    return cli_usage_error("unknown command", cmd);
}
