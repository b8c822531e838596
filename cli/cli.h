/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cli/cli.h: what the files of the pflref command line share.
 *
 *   cli/common.c  usage text, exit codes, error printing, the program's
 *                 name for replay lines, writing outputs (a file or
 *                 standard output)
 *   cli/check.c   pflref verify and pflref check
 *   cli/options.c check's options
 *   cli/walk.c    the files verify and check read: folder walks
 *   cli/report.c  check's report: text and pflref-check-report/1
 *   cli/pflref.c  main, run, table, list
 *   cli/freeze.c  pflref freeze
 *   cli/plot.c    pflref plot (gnuplot figures; plot_curves.c, and
 *                 plot_check.c: a check report's digits along the
 *                 trajectory)
 *   cli/progress.c the progress line on a terminal
 */
#ifndef PFLREF_CLI_H
#define PFLREF_CLI_H

#include <stddef.h>
#include <stdint.h>
#include "pflref.h"

/* Exit codes (docs/cli.md). */
enum {
    EXIT_OK = 0,
    EXIT_MISMATCH = 1,
    EXIT_USAGE = 2,
    EXIT_DIVERGED = 3,
    EXIT_NOTHING = 4,
    EXIT_INTERNAL = 5
};

extern const char CLI_USAGE[];
extern const char CLI_HELP[];

/* `pflref CMD --help`: CMD's usage lines and its paragraph of CLI_HELP on
 * standard output; returns EXIT_OK, or EXIT_USAGE when CMD has none. */
int cli_command_help(const char *cmd);
/* Whether args (n of them) ask for help: one of them is --help, or the
 * first is -h. */
int cli_asks_help(int n, char **args);

/* The program as the user invoked it (argv[0]; "pflref" until main sets
 * it), for the replay lines of verify and check: the same string run from
 * the same folder runs the same program (docs/cli.md, "replay"). */
void cli_set_program(const char *argv0);
/* A shell word for s (s itself when it needs no quoting, else in single
 * quotes), into out; returns out. */
#define CLI_WORD_MAX (4 * PFLREF_PATH_MAX + 3)
const char *cli_shell_word(const char *s, char out[CLI_WORD_MAX]);
/* The program as a shell word (static storage). */
const char *cli_program_word(void);

/* The exit code of a library status. */
int cli_exit_code(pflref_status st);
/* Print "pflref: CONTEXT: WHERE: MESSAGE" and return the exit code. */
int cli_fail(const pflref_error *err, const char *context);
/* Print a usage error and the usage; return EXIT_USAGE. */
int cli_usage_error(const char *msg, const char *arg);
/* The per-client values of `metric` for the model `label` of the result
 * file at path (*values: free() it) and their summary: 0, or the exit
 * code after printing the error with the path (`table`, `plot clients`). */
int cli_read_metric_column(const char *path, const char *label,
                           const char *metric, double **values, size_t *n,
                           pflref_summary *summary);

/* Outputs (cli/common.c).  "-" and "/dev/stdout" name standard output,
 * written in place (no temporary file, no rename); any other path is a
 * file, written by the library's one writer (pflref_write_file_with:
 * regular files only, nothing partial, links followed and kept). */
int cli_is_stdout(const char *path);
/* Refuse early what the write would refuse (pflref_write_file_check;
 * standard output always passes), before the work that makes the output. */
pflref_status cli_check_output(const char *path, pflref_error *err);
/* Write path through step (ctx handed to it); err's where is "stdout"
 * for standard output. */
pflref_status cli_write_output(const char *path, pflref_write_step step,
                               void *ctx, pflref_error *err);
/* Write text to path; on standard output stdout_end follows it (run's
 * result ends its line there, and only there). */
pflref_status cli_write_text(const char *path, const char *text,
                             const char *stdout_end, pflref_error *err);

/* -o out_path must not name the spec at spec_path (identity spec_id, text
 * text, folder dir) or its problem file: EXIT_OK, or the error printed
 * ("the <what> would overwrite an input") and EXIT_USAGE (cli/pflref.c). */
int cli_output_is_input(const char *out_path, const char *what,
                        const char *spec_path, const pflref_file_id *spec_id,
                        const char *text, size_t len, const char *dir);

/* run's --arrays inline|files and --inline-max N (argument a, its value
 * v) into o (cli/options.c): EXIT_OK, the usage error (printed), or -1
 * when a is neither option.  N is bounded as output.inline_max is. */
#define CLI_INLINE_MAX_MAX ((size_t)1 << 31)
int cli_run_output_option(const char *a, const char *v,
                          pflref_output_override *o);

/* pflref freeze SPEC -o VECTOR [options] (cli/freeze.c). */
int cli_freeze(int argc, char **argv);

/* pflref plot clients|sweep|check ... -o FIG (cli/plot.c). */
int cli_plot(int argc, char **argv);

/* pflref verify PATH... and pflref check EXPECTED CANDIDATE [options]
 * (cli/check.c). */
int cli_verify(int argc, char **argv);
int cli_check(int argc, char **argv);

/* pflref list --variants [--markdown] [GOLDEN_DIR] (cli/variants.c). */
int cli_list_variants(int argc, char **argv);

/* ---- cli/diagnose.c ----------------------------------------------------- */

/* pflref diagnose VECTOR CANDIDATE [options]. */
int cli_diagnose(int argc, char **argv);
/* The diagnosis in words ("DIAGNOSIS id: ..."), with the ranked matches
 * when ranked. */
void cli_print_diagnosis(const pflref_diagnosis *d, int ranked);
/* check --diagnose: diagnose one failing pair (dir: the vector's folder,
 * cdir: the candidate's, which its file references are relative to);
 * print the words (print), else return the pflref-diagnosis/1 document
 * (NULL on error); budget: check's --budget (0: the default). */
struct json_t;
struct json_t *cli_diagnose_pair(const char *vtext, size_t vlen,
                                 const char *dir, const char *ctext,
                                 size_t clen, const char *cdir,
                                 const pflref_check_options *cmp,
                                 size_t budget, int print);
/* --budget N (diagnose, check --diagnose): EXIT_OK, or the usage error
 * (printed). */
int cli_parse_budget(const char *arg, size_t *budget);

/* ---- cli/progress.c ----------------------------------------------------- */

/* The progress line on standard error (only when it is a terminal). */
typedef struct {
    int on;                     /* a terminal, and not --quiet          */
    int drawn;                  /* a line is on the screen              */
    const char *what;           /* the command: "run", "verify", "check" */
    const char *unit;           /* NULL: rounds; else "file"            */
    long total;                 /* T rounds, or n items; 0: unknown     */
    long round;                 /* current round, or item index         */
    long clients;               /* clients done in the current round    */
    double start, last;         /* seconds: started, last drawn         */
} cli_progress;

/* Remove --quiet (and -q) from argv; 1 when one was there. */
int cli_progress_take_quiet(int *argc, char **argv);
void cli_progress_start(cli_progress *p, const char *what, long total,
                        int quiet);
/* A trace sink (ctx: the cli_progress): counts rounds and clients. */
void cli_progress_emit(void *ctx, const pflref_event *ev);
/* Item k (from 0) of n is starting. */
void cli_progress_item(cli_progress *p, const char *unit, size_t k, size_t n);
/* Erase the line. */
void cli_progress_end(cli_progress *p);
/* The rounds a spec (or a golden vector's spec) schedules; 0 unknown. */
long cli_progress_rounds(const char *text, size_t len);

/* ---- cli/options.c ------------------------------------------------------ */

#define CLI_MAX_PATTERNS 32

/* The options of `pflref check`. */
typedef struct {
    int json;
    int diagnose;          /* --diagnose: diagnose each failing vector */
    pflref_check_options cmp;
    size_t min_vectors;
    /* --partial-min: at least this many expected records compared, and at
     * least this fraction of them (rounded up); both 0: at least one */
    size_t partial_min_count;
    double partial_min_fraction;
    const char *include[CLI_MAX_PATTERNS];
    size_t n_include;
    const char *exclude[CLI_MAX_PATTERNS];
    size_t n_exclude;
    /* diagnose and hostile folders (docs/cli.md) */
    size_t diagnose_budget;  /* --budget: runs of each --diagnose (0: the
                                default)                                  */
    int partial_min_given;   /* --partial-min was given; without it
                                --partial must compare records covering
                                every round of the expected trajectory   */
} cli_check_options;

/* --candidate-precision's value into *p: 0, or −1 when it is not one of
 * CLI_PRECISION_USAGE's; and a precision's name (cli/options.c). */
#define CLI_PRECISION_USAGE \
    "--candidate-precision is fp64, fp32, bf16 or tf32"
int cli_parse_precision(const char *v, pflref_precision *p);
const char *cli_precision_name(pflref_precision p);

/* Parse check's arguments: EXIT_OK, or a usage error (printed). */
int cli_check_parse(int argc, char **argv, cli_check_options *o,
                    const char **expected, const char **cand);

/* ---- cli/walk.c --------------------------------------------------------- */

/* A list of strings (malloc'd). */
typedef struct {
    char **items;
    size_t n, cap;
} cli_list;

int cli_list_add(cli_list *l, const char *s);
void cli_list_free(cli_list *l);

typedef struct {
    pflref_file_id *ids;
    size_t n, cap;
} cli_id_set;

/* The files found by walks, each real file and folder once. */
typedef struct {
    cli_list paths;        /* the files, in walk order          */
    cli_id_set files;      /* their identities                  */
    cli_id_set folders;    /* the folders walked                */
    cli_id_set ancestors;  /* the folders around a given folder */
} cli_walk;

/* Add path (a file) or every *.json below it (a folder, recursively,
 * sorted, links followed, each real file and folder once).  Problems (a
 * missing path, an entry that is not a regular file) are printed; returns
 * their number. */
size_t cli_walk_add(cli_walk *w, const char *path);
void cli_walk_free(cli_walk *w);
int cli_is_dir(const char *path);

/* Ids and the files that hold them. */
typedef struct {
    cli_list ids, paths;
} cli_ids;

/* Record that path holds id: NULL, or the path of an earlier file with
 * this id (nothing recorded then). */
const char *cli_ids_add(cli_ids *t, const char *id, const char *path);
void cli_ids_free(cli_ids *t);

/* ---- cli/report.c -------------------------------------------------------- */

/* "w (server, round 1)[0]: expected 4.309375, got 5.309375 (sign
 * differs)" and a newline; `who` did not produce a missing one. */
void cli_print_divergence(const pflref_divergence *d, const char *who);
/* The PASS line and the FAIL block of one comparison; `needed`: under
 * --partial, the expected records that had to be compared (0: not
 * partial); fewer compared is a failure of its own. */
void cli_print_pass(const pflref_golden_report *rep, size_t needed);
/* The Monte Carlo line (precision fp32, bf16, tf32) and, when some records
 * are chaotic, the line that says so. */
void cli_print_mca(const pflref_golden_report *rep);
void cli_print_fail(const pflref_golden_report *rep, int resync,
                    size_t needed, const char *flags, const char *replay);
/* "  flags: a, b (...)" and a newline, for the vector's flags (space-
 * separated, as pflref_golden_describe gives them); nothing when none. */
void cli_print_flags(const char *flags);
/* The JSON of one divergence, a count, one comparison's statistics. */
struct json_t;
struct json_t *cli_divergence_json(const pflref_divergence *d);
struct json_t *cli_count_json(uint64_t n);
void cli_put_comparison(struct json_t *entry, const pflref_golden_report *rep,
                        size_t needed);

#endif
