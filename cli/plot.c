/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cli/plot.c: pflref plot, pictures of results drawn by gnuplot (docs/cli.md).
 *
 *   pflref plot clients [--metric M] [--title T] -o FIG.svg|FIG.png
 *                       RESULT | COLUMN=RESULT:LABEL ...
 *       one strip per reported model: a mark per client, the mean, the
 *       worst client and the worst decile's edge marked and labelled
 *   pflref plot sweep [--metric M] [--title T] -o FIG RESULT
 *       interp's α sweep: each client's metric against α_j, α_i marked
 *   pflref plot curves [--metric M] [--title T] -o FIG [LABEL=]SPEC ...
 *       the global model's metric per round, mean and worst client, one
 *       pair of curves per spec (cli/plot_curves.c)
 *   pflref plot check [--title T] -o FIG REPORT
 *       a pflref-check-report/1 (check --json): correct digits (the
 *       smallest LRE) of each quantity name of each vector compared, and
 *       each failed vector's first divergence written on the figure
 *
 * Glue only: the numbers come from the result or the report as written;
 * this file computes nothing but where to draw them.  It writes a gnuplot
 * script with the data inline (datablocks) to gnuplot's standard input and
 * takes the picture from gnuplot's standard output into a temporary file
 * beside FIG, renamed over FIG only when gnuplot succeeded: a bad input or
 * a failed gnuplot leaves no file.  Why C and not a Python helper: the
 * results are read by the library's own reader (pflref_result_read_metric
 * names the field at fault), and gnuplot needs nothing but text.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <jansson.h>
#include "cli.h"
#include "plot.h"

/* ---- a growing text buffer --------------------------------------------- */

void sb_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        if (b->failed)
            return;
        size_t room = b->cap - b->n;
        va_start(ap, fmt);
        int k = vsnprintf(b->s == NULL ? NULL : b->s + b->n, room, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->failed = 1;
            return;
        }
        if ((size_t)k < room) {
            b->n += (size_t)k;
            return;
        }
        size_t cap = 2 * b->cap + (size_t)k + 256;
        char *s = realloc(b->s, cap);
        if (s == NULL) {
            b->failed = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
}

/* A string as a gnuplot double-quoted literal, its enhanced-text markup
 * ('@', '&', '^', '_', '{', '}') escaped so it prints as itself (and SVG
 * titles of plot elements, which test_plot.c reads, keep it). */
void sb_quoted(sbuf *b, const char *s)
{
    sb_printf(b, "\"");
    for (; *s != '\0'; s++) {
        if (*s == '"' || *s == '\\')
            sb_printf(b, "\\%c", *s);
        else if (strchr("@&^_{}", *s) != NULL)
            sb_printf(b, "\\\\%c", *s);
        else if ((unsigned char)*s >= 0x20)
            sb_printf(b, "%c", *s);
    }
    sb_printf(b, "\"");
}

/* ---- running gnuplot ----------------------------------------------------- */

/* The terminal line of a figure. */
void sb_terminal(sbuf *b, int png, int width, int height)
{
    if (png)
        sb_printf(b, "set terminal pngcairo size %d,%d font \"DejaVu Sans,10\"\n",
                  width, height);
    else
        sb_printf(b, "set terminal svg size %d,%d dynamic font \"DejaVu Sans,11\"\n",
                  width, height);
    sb_printf(b, "set output\nset encoding utf8\n"
                 "set offsets 0, 0, graph 0.05, graph 0.05\n");
}

/* Write script to gnuplot's standard input, its standard output into the
 * open file fd; 0 when gnuplot ran and exited 0. */
static int run_gnuplot(const char *script, size_t len, int fd)
{
    int pipefd[2];
    if (pipe(pipefd) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(pipefd[0]);
        close(pipefd[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(pipefd[0], STDIN_FILENO);
        dup2(fd, STDOUT_FILENO);
        close(pipefd[0]);
        close(pipefd[1]);
        execlp("gnuplot", "gnuplot", (char *)NULL);
        fprintf(stderr, "pflref: plot: cannot run gnuplot: %s (./deps.sh "
                        "plot installs it)\n", strerror(errno));
        _exit(127);
    }
    close(pipefd[0]);
    int ok = 1;
    for (size_t done = 0; done < len && ok;) {
        ssize_t k = write(pipefd[1], script + done, len - done);
        if (k < 0 && errno == EINTR)
            continue;
        ok = k > 0;
        done += ok ? (size_t)k : 0;
    }
    close(pipefd[1]);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return ok && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Render the script into o->out through a temporary file beside it;
 * returns an exit code (nothing is left behind on failure). */
int plot_render(const plot_opts *o, sbuf *script)
{
    if (script->failed) {
        fprintf(stderr, "pflref: plot: out of memory\n");
        return EXIT_INTERNAL;
    }
    size_t n = strlen(o->out) + 16;
    char *tmp = malloc(n);
    if (tmp == NULL)
        return EXIT_INTERNAL;
    snprintf(tmp, n, "%s.tmpXXXXXX", o->out);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        fprintf(stderr, "pflref: %s: cannot write the figure: %s\n", o->out,
                strerror(errno));
        free(tmp);
        return EXIT_USAGE;
    }
    int rc = EXIT_OK;
    if (run_gnuplot(script->s, script->n, fd) != 0) {
        fprintf(stderr, "pflref: %s: gnuplot failed; no figure written\n",
                o->out);
        rc = EXIT_INTERNAL;
    } else if (fchmod(fd, 0644) != 0 || fsync(fd) != 0 ||
               lseek(fd, 0, SEEK_END) <= 0) {
        fprintf(stderr, "pflref: %s: gnuplot wrote no figure\n", o->out);
        rc = EXIT_INTERNAL;
    }
    close(fd);
    if (rc == EXIT_OK && rename(tmp, o->out) != 0) {
        fprintf(stderr, "pflref: %s: cannot write the figure: %s\n", o->out,
                strerror(errno));
        rc = EXIT_USAGE;
    }
    if (rc != EXIT_OK)
        unlink(tmp);
    free(tmp);
    return rc;
}

/* ---- reading JSON files ---------------------------------------------------- */

/* The JSON object in path, or NULL with the error printed (exit 2). */
static json_t *load_object(const char *path)
{
    pflref_error err;
    pflref_error_clear(&err);
    char *text;
    size_t len;
    if (pflref_read_file(path, &text, &len, &err) != PFLREF_OK) {
        cli_fail(&err, path);
        return NULL;
    }
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    free(text);
    if (root == NULL)
        fprintf(stderr, "pflref: %s: not valid JSON: line %d: %s\n", path,
                jerr.line, jerr.text);
    else if (!json_is_object(root)) {
        fprintf(stderr, "pflref: %s: expected a JSON object\n", path);
        json_decref(root);
        root = NULL;
    }
    return root;
}

/* The "format" of root must be `format`: 1, or the error printed. */
static int has_format(const json_t *root, const char *format,
                      const char *path)
{
    const char *f = json_string_value(json_object_get(root, "format"));
    if (f != NULL && strcmp(f, format) == 0)
        return 1;
    fprintf(stderr, "pflref: %s: format: expected \"%s\", found %s%s%s\n",
            path, format, f ? "\"" : "", f ? f : "none",
            f ? "\"" : "");
    return 0;
}

/* ---- plot clients -------------------------------------------------------- */

typedef struct {
    size_t ncol, N;
    char head[PLOT_MAX_COLUMNS][64];
    double *vals[PLOT_MAX_COLUMNS];
    pflref_summary sums[PLOT_MAX_COLUMNS];
} columns;

/* Read column `head` = metric `label` of the result at path. */
static int read_column(columns *c, const char *head, const char *path,
                       const char *label, const char *metric)
{
    if (c->ncol == PLOT_MAX_COLUMNS)
        return cli_usage_error("too many columns (at most 16)", head);
    size_t n;
    double *vals;
    int rc = cli_read_metric_column(path, label, metric, &vals, &n,
                                    &c->sums[c->ncol]);
    if (rc != 0)
        return rc;
    size_t w = 0;
    while (w < n && vals[w] != c->sums[c->ncol].worst)
        w++;
    if (w == n) {
        fprintf(stderr, "pflref: %s: metrics.%s.summary.%s.worst: %.17g is "
                        "no client's value in metrics.%s.per_client.%s\n",
                path, label, metric, c->sums[c->ncol].worst, label, metric);
        free(vals);
        return EXIT_USAGE;
    }
    if (c->ncol > 0 && n != c->N) {
        fprintf(stderr, "pflref: %s: metrics.%s.per_client.%s: %zu clients, "
                        "the first column has %zu\n", path, label, metric, n,
                c->N);
        free(vals);
        return EXIT_USAGE;
    }
    snprintf(c->head[c->ncol], sizeof c->head[0], "%s", head);
    c->vals[c->ncol++] = vals;
    c->N = n;
    return EXIT_OK;
}

/* A bare RESULT: every model its metrics report, in the result's order. */
static int read_result_columns(columns *c, const char *path,
                               const char *metric)
{
    json_t *root = load_object(path);
    if (root == NULL)
        return EXIT_USAGE;
    const json_t *metrics = json_object_get(root, "metrics");
    int rc = EXIT_OK;
    if (!json_is_object(metrics) || json_object_size(metrics) == 0) {
        fprintf(stderr, "pflref: %s: metrics: expected an object with at "
                        "least one model\n", path);
        rc = EXIT_USAGE;
    }
    const char *label;
    json_t *v;
    json_object_foreach((json_t *)metrics, label, v) {
        if (rc != EXIT_OK)
            break;
        rc = read_column(c, label, path, label, metric);
    }
    json_decref(root);
    return rc;
}

/* One argument: RESULT, or COLUMN=RESULT:LABEL (cut in place). */
static int add_columns(columns *c, char *arg, const char *metric)
{
    char *eq = strchr(arg, '=');
    if (eq == NULL)
        return read_result_columns(c, arg, metric);
    char *colon = strrchr(arg, ':');
    if (colon == NULL || colon < eq)
        return cli_usage_error("expected RESULT or COLUMN=RESULT:LABEL", arg);
    *eq = '\0';
    *colon = '\0';
    return read_column(c, arg, eq + 1, colon + 1, metric);
}

/* Higher is better for accuracies: their worst client is the lowest. */
static int higher_is_better(const pflref_summary *s)
{
    return s->worst < s->mean;
}

/* The mean, worst and worst-decile marks of column k (x = k + 1). */
static void clients_marks(sbuf *b, const columns *c, size_t k)
{
    const pflref_summary *s = &c->sums[k];
    const double x = (double)k + 1.0;
    const double decile = higher_is_better(s) ? s->p10 : s->p90;
    sb_printf(b, "set arrow from %.17g,%.17g to %.17g,%.17g nohead lw 2.5 "
                 "lc rgb \"#1f4e9e\" front\n", x - 0.3, s->mean, x + 0.3, s->mean);
    sb_printf(b, "set label \"mean %.3f\" at %.17g,%.17g left tc rgb "
                 "\"#1f4e9e\" front\n", s->mean, x + 0.32, s->mean);
    sb_printf(b, "set arrow from %.17g,%.17g to %.17g,%.17g nohead lw 2.5 "
                 "lc rgb \"#b3261e\" front\n", x - 0.3, s->worst, x + 0.3, s->worst);
    sb_printf(b, "set label \"worst %.3f\" at %.17g,%.17g left tc rgb "
                 "\"#b3261e\" front\n", s->worst, x + 0.32, s->worst);
    sb_printf(b, "set arrow from %.17g,%.17g to %.17g,%.17g nohead dt 2 "
                 "lw 1.5 lc rgb \"#b3261e\" front\n", x - 0.3, decile, x + 0.3,
              decile);
    sb_printf(b, "set label \"worst decile %s %.3f\" at %.17g,%.17g left "
                 "tc rgb \"#b3261e\" font \",9\" front\n",
              higher_is_better(s) ? "≤" : "≥", decile, x + 0.32, decile);
}

/* The gnuplot script of a strip plot: one datablock and one plot element
 * ("<head>: N clients", a mark each) per column. */
static void clients_script(sbuf *b, const plot_opts *o, const columns *c)
{
    const int width = 260 + 200 * (int)c->ncol;
    sb_terminal(b, o->png, width > 1400 ? 1400 : width, 520);
    char title[256];
    snprintf(title, sizeof title, "%s per client: %zu clients (mean, worst "
             "client, worst decile marked)", o->metric, c->N);
    sb_printf(b, "set title ");
    sb_quoted(b, o->title != NULL ? o->title : title);
    sb_printf(b, "\nset ylabel ");
    sb_quoted(b, o->metric);
    sb_printf(b, "\nset key off\nset grid ytics lc rgb \"#dddddd\"\n"
                 "set xrange [0.4:%.17g]\nset xtics (", (double)c->ncol + 1.0);
    for (size_t k = 0; k < c->ncol; k++) {
        sb_printf(b, "%s", k ? ", " : "");
        sb_quoted(b, c->head[k]);
        sb_printf(b, " %zu", k + 1);
    }
    sb_printf(b, ")\n");
    for (size_t k = 0; k < c->ncol; k++) {
        clients_marks(b, c, k);
        sb_printf(b, "$col%zu << EOD\n", k);
        /* spread the marks across the strip in client order */
        for (size_t i = 0; i < c->N; i++) {
            double dx = c->N > 1 ? 0.44 * ((double)i / (double)(c->N - 1) - 0.5)
                                 : 0.0;
            sb_printf(b, "%.17g %.17g %zu\n", (double)k + 1.0 + dx,
                      c->vals[k][i], i);
        }
        sb_printf(b, "EOD\n");
    }
    sb_printf(b, "plot ");
    for (size_t k = 0; k < c->ncol; k++) {
        sb_printf(b, "%s$col%zu using 1:2 with points pt 7 ps 0.9 lc rgb "
                     "\"#444444\" title ", k ? ", " : "", k);
        char t[96];
        snprintf(t, sizeof t, "%s: %zu clients", c->head[k], c->N);
        sb_quoted(b, t);
    }
    sb_printf(b, "\n");
}

static int plot_clients(const plot_opts *o)
{
    if (o->nargs == 0)
        return cli_usage_error("plot clients needs a result", NULL);
    columns c;
    memset(&c, 0, sizeof c);
    int rc = EXIT_OK;
    char copy[PFLREF_PATH_MAX];
    for (size_t i = 0; i < o->nargs && rc == EXIT_OK; i++) {
        snprintf(copy, sizeof copy, "%s", o->args[i]);
        rc = add_columns(&c, copy, o->metric);
    }
    if (rc == EXIT_OK) {
        sbuf b = {NULL, 0, 0, 0};
        clients_script(&b, o, &c);
        rc = plot_render(o, &b);
        free(b.s);
    }
    for (size_t k = 0; k < c.ncol; k++)
        free(c.vals[k]);
    return rc;
}

/* ---- plot sweep ------------------------------------------------------------ */

/* One number of a trajectory record's value, or NAN. */
static double record_number(const json_t *rec)
{
    const json_t *v = json_object_get(rec, "value");
    return json_array_size(v) == 1 ? json_number_value(json_array_get(v, 0))
                                   : NAN;
}

/* The curve of client i: (α_j, metric_j) per grid point j into the
 * datablock, and the metric at the chosen α into *at_alpha; returns the
 * number of points. */
static size_t sweep_client(sbuf *b, const json_t *traj, long i,
                           const char *metric, double alpha, double *at_alpha)
{
    size_t np = 0;
    double a_j = NAN;
    size_t idx;
    const json_t *rec;
    json_array_foreach(traj, idx, rec) {
        const char *ph = json_string_value(json_object_get(rec, "phase"));
        const char *name = json_string_value(json_object_get(rec, "name"));
        const json_t *cl = json_object_get(rec, "client");
        if (ph == NULL || name == NULL || strcmp(ph, "interp") != 0 ||
            !json_is_integer(cl) || json_integer_value(cl) != i ||
            !json_is_integer(json_object_get(rec, "step")))
            continue;
        if (strcmp(name, "alpha_j") == 0)
            a_j = record_number(rec);
        else if (strcmp(name, metric) == 0 && isfinite(a_j)) {
            double m = record_number(rec);
            sb_printf(b, "%.17g %.17g\n", a_j, m);
            if (fabs(a_j - alpha) < 1e-12)
                *at_alpha = m;
            np++;
        }
    }
    return np;
}

/* The script of the sweep of result root (path for messages). */
static int sweep_script(sbuf *b, const plot_opts *o, const json_t *root,
                        const char *path)
{
    const json_t *alpha = json_object_get(json_object_get(root, "final"),
                                          "alpha");
    const json_t *traj = json_object_get(root, "trajectory");
    if (!json_is_array(alpha) || json_array_size(alpha) == 0) {
        fprintf(stderr, "pflref: %s: final.alpha: expected the clients' α_i "
                        "(a result of interp)\n", path);
        return EXIT_USAGE;
    }
    if (!json_is_array(traj)) {
        fprintf(stderr, "pflref: %s: trajectory: expected an array\n", path);
        return EXIT_USAGE;
    }
    const size_t N = json_array_size(alpha);
    sb_terminal(b, o->png, 820, 540);
    char title[256];
    snprintf(title, sizeof title, "%s against α per client (the chosen α_i "
             "ringed)", o->metric);
    sb_printf(b, "set title ");
    sb_quoted(b, o->title != NULL ? o->title : title);
    sb_printf(b, "\nset xlabel \"α (0: the global model, 1: the local one)\"\n"
                 "set ylabel ");
    sb_quoted(b, o->metric);
    sb_printf(b, "\nset key outside right\nset grid lc rgb \"#dddddd\"\n"
                 "set xrange [-0.02:1.02]\n$chosen << EOD\n");
    sbuf curves = {NULL, 0, 0, 0};
    for (size_t i = 0; i < N; i++) {
        double a = json_number_value(json_array_get(alpha, i)), at = NAN;
        sb_printf(&curves, "$client%zu << EOD\n", i);
        size_t np = sweep_client(&curves, traj, (long)i, o->metric, a, &at);
        sb_printf(&curves, "EOD\n");
        if (np == 0 || !isfinite(at)) {
            fprintf(stderr, "pflref: %s: trajectory: no interp note \"%s\" "
                            "%sfor client %zu (run interp with "
                            "output.trajectory round or step)\n", path,
                    o->metric, np ? "at its α_i " : "", i);
            free(curves.s);
            return EXIT_USAGE;
        }
        sb_printf(b, "%.17g %.17g %zu\n", a, at, i);
    }
    sb_printf(b, "EOD\n%s", curves.failed ? "" : curves.s);
    b->failed |= curves.failed;
    free(curves.s);
    sb_printf(b, "plot ");
    for (size_t i = 0; i < N; i++)
        sb_printf(b, "$client%zu using 1:2 with linespoints pt 7 ps 0.5 "
                     "lw 1.5 title \"client %zu\", ", i, i);
    sb_printf(b, "$chosen using 1:2 with points pt 6 ps 2.2 lw 2 lc rgb "
                 "\"black\" title ");
    sb_quoted(b, "chosen α_i");
    sb_printf(b, "\n");
    return EXIT_OK;
}

static int plot_sweep(const plot_opts *o)
{
    if (o->nargs != 1)
        return cli_usage_error("plot sweep takes one result", NULL);
    json_t *root = load_object(o->args[0]);
    if (root == NULL)
        return EXIT_USAGE;
    int rc = has_format(root, PFLREF_RESULT_FORMAT, o->args[0]) ? EXIT_OK
                                                                : EXIT_USAGE;
    sbuf b = {NULL, 0, 0, 0};
    if (rc == EXIT_OK)
        rc = sweep_script(&b, o, root, o->args[0]);
    if (rc == EXIT_OK)
        rc = plot_render(o, &b);
    free(b.s);
    json_decref(root);
    return rc;
}

/* ---- plot check -------------------------------------------------------------- */

/* Vectors drawn on one figure, at most (a panel each, the failed ones
 * first; `check --include ID` makes a report of one vector). */
#define CHECK_MAX_PANELS 4
/* Round tics on a panel's x axis, at most (every k-th round beyond). */
#define CHECK_MAX_TICS 12

/* Print "pflref: PATH: vectors[K].FIELD: what" (exit 2) and return -1. */
static int check_bad(const char *path, size_t k, const char *field,
                     const char *what)
{
    fprintf(stderr, "pflref: %s: vectors[%zu].%s: %s\n", path, k, field, what);
    return -1;
}

/* A non-negative JSON integer, or -1. */
static long long count_value(const json_t *x)
{
    return json_is_integer(x) && json_integer_value(x) >= 0
               ? (long long)json_integer_value(x) : -1;
}

/* One point of a quantity's digits along the trajectory. */
typedef struct {
    long long position, round;   /* round −1: none (the final state) */
} check_at;

static int at_order(const void *a, const void *b)
{
    const check_at *x = a, *y = b;
    return (x->position > y->position) - (x->position < y->position);
}

/* One panel: the digits of vector v (entry k) along the trajectory, read
 * and checked field by field before anything is drawn. */
typedef struct {
    const json_t *v;
    size_t k;
    long long records;           /* expected_records: the x axis' extent */
    check_at *at;                /* every point's (position, round)      */
    size_t n_at;
    double rtol[PFLREF_MAX_QUANTITY_NAMES];
    size_t n_rtol;
} check_panel;

/* Read quantity q of panel p's by_quantity: its points into the
 * datablock $p<panel>q<q> ("position digits round" lines) and p->at,
 * its rtol into p->rtol; 0, or -1 with the field named. */
static int check_quantity(sbuf *b, check_panel *p, size_t panel, size_t q,
                          const json_t *e, const char *path)
{
    char f[160];
    snprintf(f, sizeof f, "by_quantity[%zu]", q);
    const json_t *rtol = json_object_get(e, "rtol");
    const json_t *td = json_object_get(e, "trajectory_digits");
    if (json_string_value(json_object_get(e, "name")) == NULL)
        return check_bad(path, p->k, strcat(f, ".name"), "expected a string");
    if (!json_is_number(rtol) || json_number_value(rtol) < 0.0)
        return check_bad(path, p->k, strcat(f, ".rtol"),
                         "expected a number >= 0 (the tolerance; a report of "
                         "an older pflref lacks it: re-run check --json)");
    if (!json_is_object(td))
        return check_bad(path, p->k, strcat(f, ".trajectory_digits"),
                         "expected an object {position, round, min_lre} (a "
                         "report of an older pflref lacks it: re-run check "
                         "--json)");
    const json_t *pos = json_object_get(td, "position");
    const json_t *round = json_object_get(td, "round");
    const json_t *lre = json_object_get(td, "min_lre");
    const char *names[3] = {"position", "round", "min_lre"};
    const json_t *arr[3] = {pos, round, lre};
    for (size_t a = 0; a < 3; a++) {
        char g[200];
        snprintf(g, sizeof g, "%s.trajectory_digits.%s", f, names[a]);
        if (!json_is_array(arr[a]))
            return check_bad(path, p->k, g, "expected an array");
        if (json_array_size(arr[a]) != json_array_size(pos)) {
            char what[128];
            snprintf(what, sizeof what, "%zu entries, position has %zu",
                     json_array_size(arr[a]), json_array_size(pos));
            return check_bad(path, p->k, g, what);
        }
    }
    double r = json_number_value(rtol);
    size_t t = 0;
    while (t < p->n_rtol && p->rtol[t] != r)
        t++;
    if (t == p->n_rtol && t < PFLREF_MAX_QUANTITY_NAMES && r > 0.0)
        p->rtol[p->n_rtol++] = r;
    sb_printf(b, "$p%zuq%zu << EOD\n", panel, q);
    for (size_t i = 0; i < json_array_size(pos); i++) {
        const long long x = count_value(json_array_get(pos, i));
        const json_t *ri = json_array_get(round, i), *di = json_array_get(lre, i);
        char g[220];
        const char *what = NULL;
        if (x < 0 || x >= p->records)
            what = "position";
        else if (!json_is_null(ri) && count_value(ri) < 0)
            what = "round";
        else if (!json_is_number(di) || json_number_value(di) < 0.0)
            what = "min_lre";
        if (what != NULL) {
            snprintf(g, sizeof g, "%s.trajectory_digits.%s[%zu]", f, what, i);
            return check_bad(path, p->k, g,
                             what[0] == 'p' ? "expected a record's position: "
                                              "an integer below "
                                              "expected_records"
                             : what[0] == 'r' ? "expected a round (an integer "
                                                ">= 0) or null"
                                              : "expected a number >= 0 (the "
                                                "correct digits)");
        }
        const long long rd = json_is_null(ri) ? -1 : count_value(ri);
        sb_printf(b, "%lld %.17g %lld\n", x, json_number_value(di), rd);
        check_at *grown = realloc(p->at, (p->n_at + 1) * sizeof *grown);
        if (grown == NULL) {
            b->failed = 1;
            return 0;
        }
        p->at = grown;
        p->at[p->n_at++] = (check_at){x, rd};
    }
    sb_printf(b, "EOD\n");
    return 0;
}

/* The x tics of panel p: each round's first record ("round r", or r alone
 * when there are many), every k-th round when more than CHECK_MAX_TICS,
 * and the final state's first record ("final"). */
static void check_tics(sbuf *b, check_panel *p)
{
    qsort(p->at, p->n_at, sizeof *p->at, at_order);
    size_t rounds = 0;
    for (size_t i = 0; i < p->n_at; i++)
        rounds += p->at[i].round >= 0 &&
                  (i == 0 || p->at[i - 1].round != p->at[i].round);
    const size_t every = (rounds + CHECK_MAX_TICS - 1) / CHECK_MAX_TICS;
    sb_printf(b, "set xtics (");
    const char *sep = "";
    size_t nth = 0;
    for (size_t i = 0; i < p->n_at; i++) {
        const check_at *a = &p->at[i];
        if (i > 0 && p->at[i - 1].round == a->round)
            continue;
        if (a->round < 0)
            sb_printf(b, "%s\"final\" %lld", sep, a->position);
        else if (nth++ % (every ? every : 1) == 0)
            sb_printf(b, rounds <= CHECK_MAX_TICS ? "%s\"round %lld\" %lld"
                                                  : "%s\"%lld\" %lld",
                      sep, a->round, a->position);
        else
            continue;
        sep = ", ";
    }
    sb_printf(b, ")\n");
}

/* The first divergence of the panel's vector, when it has one: a vertical
 * line at its position, labelled with where the candidate starts to
 * differ; 0, or -1 with the field named. */
static int check_divergence(sbuf *b, const check_panel *p, const char *path)
{
    const json_t *d = json_object_get(p->v, "first_divergence");
    if (d == NULL || json_is_null(d))
        return 0;
    const char *name = json_string_value(json_object_get(d, "name"));
    const long long x = count_value(json_object_get(d, "position"));
    if (!json_is_object(d) || name == NULL)
        return check_bad(path, p->k, "first_divergence",
                         "expected an object with the quantity's \"name\"");
    if (x < 0 || x >= p->records)
        return check_bad(path, p->k, "first_divergence.position",
                         "expected a record's position: an integer below "
                         "expected_records (a report of an older pflref "
                         "lacks it: re-run check --json)");
    const char *id = json_string_value(json_object_get(p->v, "id"));
    char text[512];
    int n = snprintf(text, sizeof text, "%s: first divergence at %s",
                     id != NULL ? id : "vector", name);
    static const char *const keys[] = {"event", "phase", "round", "client",
                                       "step"};
    for (size_t k = 0; k < 5 && n > 0 && (size_t)n < sizeof text; k++) {
        const json_t *y = json_object_get(d, keys[k]);
        if (json_is_integer(y))
            n += snprintf(text + n, sizeof text - (size_t)n, ", %s %lld",
                          keys[k], (long long)json_integer_value(y));
        else if (json_is_string(y))
            n += snprintf(text + n, sizeof text - (size_t)n, ", %s",
                          json_string_value(y));
    }
    sb_printf(b, "set arrow from first %lld, graph 0 to first %lld, graph 1 "
                 "nohead lw 1.5 lc rgb \"#b3261e\" front\nset label ",
              x, x);
    sb_quoted(b, text);
    /* the whole text across the bottom, a short one at the line, on the
     * side with more room */
    const int right = 2 * x > p->records;
    sb_printf(b, " at graph 0.01, graph 0.04 left tc rgb \"#b3261e\" front\n"
                 "set label \"first divergence\" at first %lld, graph 0.94 %s "
                 "offset %d,0 tc rgb \"#b3261e\" front\n", x,
              right ? "right" : "left", right ? -1 : 1);
    return 0;
}

/* Panel p's datablocks, settings and plot command; 0, or -1 with the
 * field named. */
static int check_panel_script(sbuf *b, const plot_opts *o, check_panel *p,
                              size_t panel, const char *path)
{
    const json_t *byq = json_object_get(p->v, "by_quantity");
    p->records = count_value(json_object_get(p->v, "expected_records"));
    if (p->records < 0)
        return check_bad(path, p->k, "expected_records",
                         "expected an integer >= 0");
    if (count_value(json_object_get(p->v, "digits_stretch")) < 1)
        return check_bad(path, p->k, "digits_stretch",
                         "expected an integer >= 1 (records per point; a "
                         "report of an older pflref lacks it: re-run check "
                         "--json)");
    if (!json_is_array(byq))
        return check_bad(path, p->k, "by_quantity", "expected an array");
    size_t q;
    const json_t *e;
    json_array_foreach(byq, q, e)
        if (check_quantity(b, p, panel, q, e, path) != 0)
            return -1;
    /* the 15.95 cap (every digit a double holds) dashed grey */
    sb_printf(b, "unset arrow\nunset label\nset arrow from graph 0, first "
                 "%.2f to graph 1, first %.2f nohead dt 3 lc rgb \"#888888\"\n"
                 "set title ", PFLREF_LRE_CAP, PFLREF_LRE_CAP);
    const char *id = json_string_value(json_object_get(p->v, "id"));
    char title[300];
    const long long stretch =
        count_value(json_object_get(p->v, "digits_stretch"));
    snprintf(title, sizeof title, "%s: correct digits along the trajectory",
             id != NULL ? id : "vector");
    sb_quoted(b, o->title != NULL ? o->title : title);
    sb_printf(b, "\nset xlabel \"expected records in round, client, step "
                 "order");
    if (stretch > 1)
        sb_printf(b, "; a point: the fewest digits of %lld records", stretch);
    else
        sb_printf(b, " (the final state last)");
    sb_printf(b, "\"");
    sb_printf(b, "\nset xrange [-0.5:%lld]\n", p->records > 0 ? p->records : 1);
    check_tics(b, p);
    if (check_divergence(b, p, path) != 0)
        return -1;
    for (size_t t = 0; t < p->n_rtol; t++)
        sb_printf(b, "$p%zutol%zu << EOD\n-0.5 %.17g\n%lld %.17g\nEOD\n",
                  panel, t, -log10(p->rtol[t]), p->records,
                  -log10(p->rtol[t]));
    sb_printf(b, "plot ");
    json_array_foreach(byq, q, e) {
        sb_printf(b, "%s$p%zuq%zu using 1:2 with linespoints pt 7 ps 0.6 "
                     "title ", q ? ", " : "", panel, q);
        sb_quoted(b, json_string_value(json_object_get(e, "name")));
    }
    for (size_t t = 0; t < p->n_rtol; t++) {
        char name[96];
        snprintf(name, sizeof name, "tolerance: %.3g digits (rtol %.3g)",
                 -log10(p->rtol[t]), p->rtol[t]);
        sb_printf(b, "%s$p%zutol%zu using 1:2 with lines dt 2 lw 1.5 lc rgb "
                     "\"#1f4e9e\" title ", q || t ? ", " : "", panel, t);
        sb_quoted(b, name);
    }
    sb_printf(b, "\n");
    return 0;
}

/* Whether entry v of the report failed numerically (drawn first). */
static int check_failed(const json_t *v)
{
    const char *status = json_string_value(json_object_get(v, "status"));
    return status != NULL && strcmp(status, "mismatch") == 0;
}

/* Whether entry v was compared numerically (a malformed pair or a wrong
 * outcome class has no digits to draw). */
static int check_compared(const json_t *v)
{
    const char *status = json_string_value(json_object_get(v, "status"));
    return status == NULL || strcmp(status, "pass") == 0 ||
           strcmp(status, "mismatch") == 0;
}

static int check_script(sbuf *b, const plot_opts *o, const json_t *root,
                        const char *path)
{
    const json_t *vecs = json_object_get(root, "vectors");
    if (!json_is_array(vecs) || json_array_size(vecs) == 0) {
        fprintf(stderr, "pflref: %s: vectors: expected at least one vector "
                        "compared\n", path);
        return EXIT_USAGE;
    }
    /* the failed vectors first, then the passed ones, in report order */
    size_t pick[CHECK_MAX_PANELS], n = 0, drawable = 0;
    for (int pass = 0; pass < 2; pass++) {
        size_t k;
        const json_t *v;
        json_array_foreach(vecs, k, v) {
            if (!json_is_object(v)) {
                fprintf(stderr, "pflref: %s: vectors[%zu]: expected an "
                                "object\n", path, k);
                return EXIT_USAGE;
            }
            if (!check_compared(v) || check_failed(v) != (pass == 0))
                continue;
            drawable++;
            if (n < CHECK_MAX_PANELS)
                pick[n++] = k;
        }
    }
    if (n == 0) {
        fprintf(stderr, "pflref: %s: vectors: no vector was compared "
                        "numerically (each is malformed or a wrong outcome "
                        "class)\n", path);
        return EXIT_USAGE;
    }
    if (drawable > n)
        fprintf(stderr, "pflref: plot check: note: %zu of %zu vectors drawn "
                        "(the failed ones first); check --include ID makes "
                        "a report of one\n", n, drawable);
    sb_terminal(b, o->png, 1040, 400 * (int)n);
    sb_printf(b, "set ylabel \"correct digits (LRE)\"\nset yrange [0:16.9]\n"
                 "set key outside right top vertical Left reverse\n"
                 "set grid ytics lc rgb \"#dddddd\"\nset offsets 0, 0, 0, 0\n");
    if (n > 1)
        sb_printf(b, "set multiplot layout %zu,1\n", n);
    int rc = EXIT_OK;
    check_panel panels[CHECK_MAX_PANELS];
    memset(panels, 0, sizeof panels);
    for (size_t i = 0; i < n && rc == EXIT_OK; i++) {
        panels[i].v = json_array_get(vecs, pick[i]);
        panels[i].k = pick[i];
        if (check_panel_script(b, o, &panels[i], i, path) != 0)
            rc = EXIT_USAGE;
    }
    for (size_t i = 0; i < n; i++)
        free(panels[i].at);
    if (n > 1)
        sb_printf(b, "unset multiplot\n");
    return rc;
}

static int plot_check(const plot_opts *o)
{
    if (o->nargs != 1)
        return cli_usage_error("plot check takes one report (check --json)",
                               NULL);
    json_t *root = load_object(o->args[0]);
    if (root == NULL)
        return EXIT_USAGE;
    int rc = has_format(root, "pflref-check-report/1", o->args[0])
                 ? EXIT_OK : EXIT_USAGE;
    sbuf b = {NULL, 0, 0, 0};
    if (rc == EXIT_OK)
        rc = check_script(&b, o, root, o->args[0]);
    if (rc == EXIT_OK)
        rc = plot_render(o, &b);
    free(b.s);
    json_decref(root);
    return rc;
}

/* ---- the command ----------------------------------------------------------- */

static int parse_opts(int argc, char **argv, plot_opts *o)
{
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int has_value = i + 1 < argc;
        if (strcmp(a, "-o") == 0 || strcmp(a, "--metric") == 0 ||
            strcmp(a, "--title") == 0) {
            if (!has_value)
                return cli_usage_error("option needs a value", a);
            const char *v = argv[++i];
            if (a[1] == 'o')
                o->out = v;
            else if (a[2] == 'm')
                o->metric = v;
            else
                o->title = v;
        } else if (a[0] == '-' && a[1] != '\0')
            return cli_usage_error("unknown option", a);
        else if (o->nargs == PLOT_MAX_COLUMNS)
            return cli_usage_error("too many arguments (at most 16)", a);
        else
            o->args[o->nargs++] = a;
    }
    if (o->out == NULL)
        return cli_usage_error("plot needs -o FIG.svg or -o FIG.png", NULL);
    size_t n = strlen(o->out);
    if (n > 4 && strcmp(o->out + n - 4, ".png") == 0)
        o->png = 1;
    else if (!(n > 4 && strcmp(o->out + n - 4, ".svg") == 0))
        return cli_usage_error("-o: the figure's name must end in .svg or "
                               ".png", o->out);
    return EXIT_OK;
}

int cli_plot(int argc, char **argv)
{
    if (argc < 1)
        return cli_usage_error("plot needs a kind: clients, sweep, curves or "
                               "check",
                               NULL);
    plot_opts o;
    memset(&o, 0, sizeof o);
    o.metric = "test_mse";
    int rc = parse_opts(argc - 1, argv + 1, &o);
    if (rc != EXIT_OK)
        return rc;
    if (strcmp(argv[0], "clients") == 0)
        return plot_clients(&o);
    if (strcmp(argv[0], "sweep") == 0)
        return plot_sweep(&o);
    if (strcmp(argv[0], "check") == 0)
        return plot_check(&o);
    if (strcmp(argv[0], "curves") == 0)
        return plot_curves(&o);
    return cli_usage_error("unknown kind of plot (clients, sweep, curves, "
                           "check)",
                           argv[0]);
}
