/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cli/common.c: what every command of the pflref program shares: the usage
 * text, exit codes from library statuses, and error printing.  Both
 * cli/pflref.c (main and the run, table and list commands) and cli/check.c
 * (verify and check) call these; neither calls the other except main's
 * dispatch to cli_verify and cli_check.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

/* The program the user ran, as typed: "build/rel/pflref" replays from the
 * checkout, "/usr/local/bin/pflref" from anywhere, "pflref" through PATH;
 * its basename alone would name a program PATH may not find. */
static const char *program = "pflref";

void cli_set_program(const char *argv0)
{
    if (argv0 != NULL && argv0[0] != '\0')
        program = argv0;
}

const char *cli_shell_word(const char *s, char out[CLI_WORD_MAX])
{
    const char *safe = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                       "0123456789_./:=@%+,-";
    if (s[0] != '\0' && strspn(s, safe) == strlen(s)) {
        snprintf(out, CLI_WORD_MAX, "%s", s);
        return out;
    }
    /* 'it'\''s': a quote closes, an escaped quote, and it reopens */
    size_t n = 0;
    out[n++] = '\'';
    for (; *s != '\0' && n + 6 < CLI_WORD_MAX; s++) {
        if (*s == '\'') {
            memcpy(out + n, "'\\''", 4);
            n += 4;
        } else
            out[n++] = *s;
    }
    out[n++] = '\'';
    out[n] = '\0';
    return out;
}

const char *cli_program_word(void)
{
    static char word[CLI_WORD_MAX];
    return cli_shell_word(program, word);
}

const char CLI_USAGE[] =
    "usage: pflref run SPEC [-o RESULT] [--arrays inline|files]\n"
    "                  [--inline-max N] [--trace] [--quiet]\n"
    "       pflref table [--metric NAME] COLUMN=RESULT:LABEL ...\n"
    "       pflref verify [--quiet] PATH...\n"
    "       pflref check EXPECTED CANDIDATE [--resync] [--partial]\n"
    "                    [--partial-min N|FRACTION] [--json]\n"
    "                    [--include PAT]... [--exclude PAT]...\n"
    "                    [--min-vectors N]\n"
    "                    [--candidate-precision fp64|fp32|bf16|tf32]\n"
    "                    [--mca-runs K] [--mca-c C] [--mca-seed S]\n"
    "                    [--diagnose [--budget N]]\n"
    "       pflref diagnose VECTOR CANDIDATE [--budget N] [--json] [--partial]\n"
    "                    [--candidate-precision fp64|fp32|bf16|tf32]\n"
    "       pflref freeze SPEC -o VECTOR [--atol A --rtol R --basis TEXT]\n"
    "                    [--id ID] [--trajectory step|round|none]\n"
    "                    [--arrays inline|files [--inline-max N]]\n"
    "       pflref plot clients|sweep|curves|check [--metric M] [--title T]\n"
    "                    [--format svg|png] -o FIG.svg|FIG.png|- INPUT...\n"
    "       pflref list [--variants [--markdown] [GOLDEN_DIR]]\n"
    "       pflref --help | --version\n";

/* What each command does, printed after CLI_USAGE (two strings: ISO C
 * promises string literals of 4095 characters, not more). */
const char CLI_HELP[] =
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
    "  check  compare a candidate implementation's results (pflref-result/1\n"
    "         with the vector's \"id\") with golden vectors: files, or folders\n"
    "         paired by id.  Reports per quantity max abs/rel error, correct\n"
    "         digits and ULPs, the first divergence (round, client, step,\n"
    "         quantity) and the command that replays it.  --resync recomputes\n"
    "         each round from the candidate's own state and lists every\n"
    "         divergent step; --partial skips expected quantities the\n"
    "         candidate did not record (what it did record must cover\n"
    "         every round), and --partial-min sets how many expected\n"
    "         records (a count, or a fraction: 0.5, 50%) must be compared\n"
    "         instead.  --diagnose names the known variant each failing\n"
    "         candidate computes instead (see diagnose; --budget N).\n"
    "  diagnose  re-run the vector under every preset of its algorithm and,\n"
    "         from each, one change at a time (each other switch value; a\n"
    "         hyperparameter x2, x1/2, 0 or its default; a count +-1; linked\n"
    "         pairs), then a beam of two changes; name the variant the\n"
    "         candidate matches and the code it comes from, or the nearest\n"
    "         and where it diverges.  Exit 0: a variant matches; 1: none.\n"
    "  freeze run a spec and write a golden vector whose expected side is\n"
    "         the reference's own output (provenance \"reference\"), so an\n"
    "         implementation can be checked against pflref on one's own\n"
    "         problem; the tolerance defaults to the fp64 basis (1e-10).\n"
    "  plot   draw a figure with gnuplot: clients (per-client strips of\n"
    "         results, mean, worst and worst decile marked), sweep (interp's\n"
    "         α curves), curves (the global model per round, from specs),\n"
    "         check (correct digits along the trajectory, from a check\n"
    "         --json report; the first divergence marked).\n"
    "  list   list the algorithms, models, hyperparameters and switches;\n"
    "         --variants: every switch value and preset as a Markdown table,\n"
    "         with the vectors under GOLDEN_DIR that run each one.\n"
    "\n"
    "-o - (or -o /dev/stdout) writes to standard output.  Any other -o\n"
    "names a regular file (or a new one), replaced whole when complete; a\n"
    "FIFO, a device, a folder or a read-only file is refused.\n"
    "\n"
    "On a terminal, run, verify and check keep one progress line on\n"
    "standard error (round t of T, clients done, elapsed, estimate), erased\n"
    "at the end; --quiet (-q) turns it off.  Never into a pipe or a file.\n"
    "\n"
    "exit status: 0 ok, 1 mismatch, 2 usage or invalid input, 3 numerical\n"
    "             divergence, 4 nothing to verify, 5 internal error.  docs/cli.md has the details.\n";

/* The length of the line at s, its newline included. */
static size_t line_length(const char *s)
{
    const char *nl = strchr(s, '\n');
    return nl != NULL ? (size_t)(nl - s) + 1 : strlen(s);
}

/* Whether line (of len characters) starts, after its blanks and an
 * optional "usage:", with "pflref CMD" followed by a blank or its end. */
static int usage_line_of(const char *line, size_t len, const char *cmd)
{
    const char *p = line;
    if (strncmp(p, "usage:", 6) == 0)
        p += 6;
    while (*p == ' ')
        p++;
    size_t k = strlen(cmd);
    return (size_t)(p - line) + 7 + k < len && strncmp(p, "pflref ", 7) == 0 &&
           strncmp(p + 7, cmd, k) == 0 && (p[7 + k] == ' ' || p[7 + k] == '\n');
}

int cli_command_help(const char *cmd)
{
    int found = 0;
    /* its usage lines, each with the lines that continue it */
    for (const char *s = CLI_USAGE; *s != '\0';) {
        size_t len = line_length(s);
        if (usage_line_of(s, len, cmd)) {
            const char *p = strncmp(s, "usage:", 6) == 0 ? s + 6 : s;
            while (*p == ' ')
                p++;
            printf("usage: %.*s", (int)(len - (size_t)(p - s)), p);
            found = 1;
            for (s += len; *s == ' ' && strstr(s, "pflref ") != s + strspn(s, " ");
                 s += line_length(s))
                printf("%.*s", (int)line_length(s), s);
        } else
            s += len;
    }
    if (!found)
        return cli_usage_error("unknown command", cmd);
    /* its paragraph: "  CMD" and the lines indented under it */
    size_t k = strlen(cmd);
    for (const char *s = CLI_HELP; *s != '\0'; s += line_length(s)) {
        if (strncmp(s, "  ", 2) != 0 || strncmp(s + 2, cmd, k) != 0 || s[2 + k] != ' ')
            continue;
        putchar('\n');
        do {
            printf("%.*s", (int)line_length(s), s);
            s += line_length(s);
        } while (strncmp(s, "         ", 9) == 0);
        break;
    }
    const char *status = strstr(CLI_HELP, "exit status:");
    if (status != NULL)
        printf("\n%s", status);
    return EXIT_OK;
}

int cli_asks_help(int n, char **args)
{
    for (int i = 0; i < n; i++)
        if (strcmp(args[i], "--help") == 0 || (i == 0 && strcmp(args[i], "-h") == 0))
            return 1;
    return 0;
}

int cli_exit_code(pflref_status st)
{
    switch (st) {
    case PFLREF_OK:       return EXIT_OK;
    case PFLREF_EDIVERGE: return EXIT_DIVERGED;
    case PFLREF_EINTERNAL:return EXIT_INTERNAL;
    default:              return EXIT_USAGE;
    }
}

int cli_fail(const pflref_error *err, const char *context)
{
    if (err->where[0] != '\0')
        fprintf(stderr, "pflref: %s: %s: %s\n", context, err->where,
                err->message);
    else
        fprintf(stderr, "pflref: %s: %s\n", context, err->message);
    return cli_exit_code(err->status);
}

int cli_usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "pflref: %s%s%s\n%s%s", msg, arg ? ": " : "",
            arg ? arg : "", CLI_USAGE, CLI_HELP);
    return EXIT_USAGE;
}

int cli_read_metric_column(const char *path, const char *label,
                           const char *metric, double **values, size_t *n,
                           pflref_summary *summary)
{
    pflref_error err;
    pflref_error_clear(&err);
    char *text;
    size_t len;
    *values = NULL;
    pflref_status st = pflref_read_file(path, &text, &len, &err);
    if (st == PFLREF_OK) {
        st = pflref_result_read_metric(text, len, label, metric, values, n,
                                       summary, &err);
        free(text);
    }
    return st == PFLREF_OK ? 0 : cli_fail(&err, path);
}

/* ---- output ------------------------------------------------------------- */

int cli_is_stdout(const char *path)
{
    return path != NULL &&
           (strcmp(path, "-") == 0 || strcmp(path, "/dev/stdout") == 0);
}

pflref_status cli_write_output(const char *path, pflref_write_step step,
                               void *ctx, pflref_error *err)
{
    if (!cli_is_stdout(path))
        return pflref_write_file_with(path, step, ctx, err);
    /* Standard output is written where it is, with no temporary file and
     * no rename: "/dev/stdout" is taken as a name for it, never opened,
     * so whatever descriptor 1 is (a pipe, a terminal, a file the shell
     * opened) is written and nothing is renamed over.  stdio's buffer
     * goes first, so the bytes keep their order. */
    if (fflush(stdout) != 0)
        return pflref_error_set(err, PFLREF_EIO, "stdout",
                                "cannot write stdout: %s", strerror(errno));
    pflref_error e;
    pflref_error_clear(&e);
    pflref_status st = step(ctx, STDOUT_FILENO, "stdout", &e);
    if (st != PFLREF_OK && err != NULL) {
        *err = e;
        err->status = st;
        if (err->where[0] == '\0')
            snprintf(err->where, sizeof err->where, "stdout");
    }
    return st;
}

pflref_status cli_check_output(const char *path, pflref_error *err)
{
    return cli_is_stdout(path) ? PFLREF_OK
                               : pflref_write_file_check(path, err);
}

/* The text, then `end`, into fd (cli_write_text). */
typedef struct {
    const char *text, *end;
} text_then;

static pflref_status text_step(void *ctx, int fd, const char *name,
                               pflref_error *err)
{
    const text_then *t = ctx;
    pflref_write_buffer a = {t->text, strlen(t->text)};
    pflref_write_buffer b = {t->end, strlen(t->end)};
    pflref_status st = pflref_write_buffer_step(&a, fd, name, err);
    return st == PFLREF_OK ? pflref_write_buffer_step(&b, fd, name, err) : st;
}

pflref_status cli_write_text(const char *path, const char *text,
                             const char *stdout_end, pflref_error *err)
{
    text_then t = {text, cli_is_stdout(path) ? stdout_end : ""};
    return cli_write_output(path, text_step, &t, err);
}
