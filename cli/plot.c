/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cli/plot.c: pflref plot, pictures of results drawn by gnuplot (docs/cli.md).
 *
 *   pflref plot clients [--metric M] [--title T] -o FIG.svg|FIG.png
 *                       RESULT | COLUMN=RESULT:LABEL ...
 *       one strip per reported model: a mark per client, the mean, the
 *       worst client and the worst decile's edge marked and labelled
 *   pflref plot sweep [--metric M] [--title T] -o FIG RESULT
 *       interp's α sweep: each client's metric against α_j, α_i marked
 *       (a result whose arrays are in files is made self-contained by
 *       pflref_result_inline first)
 *   pflref plot curves [--metric M] [--title T] -o FIG [LABEL=]SPEC ...
 *       the global model's metric per round, mean and worst client, one
 *       pair of curves per spec (cli/plot_curves.c)
 *   pflref plot check [--title T] -o FIG REPORT
 *       a pflref-check-report/1 (check --json): each quantity's correct
 *       digits along the trajectory, the tolerance's digits, and each
 *       failed vector's first divergence marked (cli/plot_check.c)
 *
 * Glue only: the numbers come from the result or the report as written;
 * this file computes nothing but where to draw them.  It writes a gnuplot
 * script with the data inline (datablocks) to gnuplot's standard input and
 * takes the picture from gnuplot's standard output into FIG through the
 * one writer (pflref_write_file_with: a temporary file beside FIG,
 * renamed over it only when gnuplot succeeded, and only when FIG is a
 * regular file or absent), or onto standard output for -o - (SVG unless
 * --format png): a bad input or a failed gnuplot leaves no file.  Why C
 * and not a Python helper: the results are read by the library's own
 * reader (pflref_result_read_metric names the field at fault), and
 * gnuplot needs nothing but text.
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

/* The writer's step (pflref_write_step): gnuplot draws the script
 * straight into fd, the writer's temporary file or standard output.  A
 * gnuplot that fails or writes nothing is an internal error (exit 5): the
 * script is pflref's own. */
static pflref_status gnuplot_step(void *ctx, int fd, const char *name,
                                  pflref_error *err)
{
    const sbuf *script = ctx;
    /* where fd can seek (a file), an empty figure is caught by its size */
    const off_t start = lseek(fd, 0, SEEK_CUR);
    if (run_gnuplot(script->s, script->n, fd) != 0)
        return pflref_error_set(err, PFLREF_EINTERNAL, name,
                                "gnuplot failed; no figure written");
    if (start >= 0 && lseek(fd, 0, SEEK_CUR) <= start)
        return pflref_error_set(err, PFLREF_EINTERNAL, name,
                                "gnuplot wrote no figure");
    return PFLREF_OK;
}

/* Render the script into o->out (the one writer: a temporary file beside
 * it, renamed when gnuplot succeeded; or standard output); returns an
 * exit code (nothing is left behind on failure). */
int plot_render(const plot_opts *o, sbuf *script)
{
    if (script->failed) {
        fprintf(stderr, "pflref: plot: out of memory\n");
        return EXIT_INTERNAL;
    }
    pflref_error err;
    pflref_error_clear(&err);
    if (cli_write_output(o->out, gnuplot_step, script, &err) != PFLREF_OK)
        return cli_fail(&err, "plot");
    return EXIT_OK;
}

/* ---- reading JSON files ---------------------------------------------------- */

/* The JSON object in text (len bytes, read from path), or NULL with the
 * error printed. */
static json_t *parse_object(const char *text, size_t len, const char *path)
{
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
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

/* The JSON object in path, or NULL with the error printed (exit 2). */
json_t *plot_load_object(const char *path)
{
    pflref_error err;
    pflref_error_clear(&err);
    char *text;
    size_t len;
    if (pflref_read_file(path, &text, &len, &err) != PFLREF_OK) {
        cli_fail(&err, path);
        return NULL;
    }
    json_t *root = parse_object(text, len, path);
    free(text);
    return root;
}

/* The result in path with its arrays in files (relative to its folder)
 * replaced by their numbers (pflref_result_inline: references checked,
 * the manifest too), or NULL with the error printed (exit 2). */
static json_t *load_result(const char *path)
{
    pflref_error err;
    pflref_error_clear(&err);
    char *text, *self = NULL;
    size_t len;
    if (pflref_read_file(path, &text, &len, &err) != PFLREF_OK) {
        cli_fail(&err, path);
        return NULL;
    }
    /* malformed JSON is named as plot names it, before the references */
    json_t *root = parse_object(text, len, path);
    char dir[PFLREF_PATH_MAX];
    pflref_file_folder(path, dir, sizeof dir);
    if (root != NULL) {
        json_decref(root);
        root = NULL;
        if (pflref_result_inline(text, len, dir, &self, &err) != PFLREF_OK)
            cli_fail(&err, path);
        else
            root = parse_object(self, strlen(self), path);
    }
    free(self);
    free(text);
    return root;
}

/* The "format" of root must be `format`: 1, or the error printed. */
int plot_has_format(const json_t *root, const char *format,
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
    json_t *root = plot_load_object(path);
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

/* A mark's label in a strip plot: the value it labels, where it is
 * drawn (y, moved up off a label below it), its text and colour. */
typedef struct {
    double value, y;
    char text[96];
    const char *colour;
    int small;
} mark_label;

#define MEAN_COLOUR "#1f4e9e"
#define WORST_COLOUR "#b3261e"
/* A label's height as a fraction of the y range: an 11-point line, with
 * room, on the some 420 pixels of the 520-pixel figure's plot area. */
#define LABEL_HEIGHT 0.05

/* The labels of column s's marks (mean, worst, worst decile's edge),
 * ascending by value; marks whose values print alike (%.3f) share one
 * label that names them all ("worst = worst decile 3.125"), never two
 * labels printed over each other.  Returns their number (1 to 3). */
static size_t column_labels(const pflref_summary *s, mark_label *l)
{
    const int hib = higher_is_better(s);
    const struct {
        double y;
        const char *name, *alone, *colour;
        int small;
    } m[3] = {{s->mean, "mean", "mean", MEAN_COLOUR, 0},
              {s->worst, "worst", "worst", WORST_COLOUR, 0},
              {hib ? s->p10 : s->p90, "worst decile",
               hib ? "worst decile ≤" : "worst decile ≥", WORST_COLOUR, 1}};
    char shown[3][32];
    size_t n = 0, first[3], marks[3] = {0, 0, 0};
    for (size_t i = 0; i < 3; i++) {
        char v[32];
        snprintf(v, sizeof v, "%.3f", m[i].y);
        size_t j = 0;
        while (j < n && strcmp(shown[j], v) != 0)
            j++;
        if (j == n) {               /* a label of its own */
            l[n] = (mark_label){.value = m[i].y, .y = m[i].y,
                                .colour = m[i].colour, .small = m[i].small};
            snprintf(l[n].text, sizeof l[n].text, "%s", m[i].name);
            snprintf(shown[n], sizeof shown[n], "%s", v);
            first[n++] = i;
        } else {                    /* printed alike: one label names both */
            size_t len = strlen(l[j].text);
            snprintf(l[j].text + len, sizeof l[j].text - len, " = %s", m[i].name);
            l[j].small = 0;
        }
        marks[j]++;
    }
    for (size_t i = 0; i < n; i++) {
        if (marks[i] == 1)          /* alone: "worst decile ≥ 3.125" */
            snprintf(l[i].text, sizeof l[i].text, "%s", m[first[i]].alone);
        size_t len = strlen(l[i].text);
        snprintf(l[i].text + len, sizeof l[i].text - len, " %s", shown[i]);
    }
    for (size_t i = 1; i < n; i++)           /* insertion sort by value */
        for (size_t j = i; j > 0 && l[j].value < l[j - 1].value; j--) {
            mark_label t = l[j];
            l[j] = l[j - 1];
            l[j - 1] = t;
        }
    return n;
}

/* Labels of one column at least h apart: each moved up as little as it
 * must to clear the one below it.  Returns the highest label's y. */
static double stack_labels(mark_label *l, size_t n, double h)
{
    for (size_t i = 0; i < n; i++)
        l[i].y = i == 0 ? l[i].value : fmax(l[i].value, l[i - 1].y + h);
    return n ? l[n - 1].y : -INFINITY;
}

/* The y range [*lo, *hi] of a strip plot: every client's value and every
 * label, with a margin of 5 % of the range on each side; the labels are
 * stacked LABEL_HEIGHT of the range apart, and since stacking can grow the
 * range, the range is recomputed until it holds what the labels need. */
static void clients_range(const columns *c, mark_label l[][3], size_t *nl,
                          double *lo, double *hi)
{
    double a = INFINITY, b = -INFINITY;
    for (size_t k = 0; k < c->ncol; k++) {
        for (size_t i = 0; i < c->N; i++) {
            a = fmin(a, c->vals[k][i]);
            b = fmax(b, c->vals[k][i]);
        }
        nl[k] = column_labels(&c->sums[k], l[k]);
    }
    double range = b > a ? (b - a) / 0.9 : fmax(fabs(b), 1.0) * 0.5;
    for (int it = 0; it < 64; it++) {
        const double h = LABEL_HEIGHT * range, margin = 0.05 * range;
        double top = b;
        for (size_t k = 0; k < c->ncol; k++)
            top = fmax(top, stack_labels(l[k], nl[k], h) + 0.6 * h);
        *lo = a - margin;
        *hi = top + margin;
        if (*hi - *lo <= range * (1.0 + 1e-9))
            break;
        range = *hi - *lo;
    }
}

/* The mean, worst and worst-decile marks of column k (x = k + 1), and
 * their labels l (stacked: clients_range). */
static void clients_marks(sbuf *b, const columns *c, size_t k,
                          const mark_label *l, size_t nl)
{
    const pflref_summary *s = &c->sums[k];
    const double x = (double)k + 1.0;
    const double decile = higher_is_better(s) ? s->p10 : s->p90;
    sb_printf(b, "set arrow from %.17g,%.17g to %.17g,%.17g nohead lw 2.5 "
                 "lc rgb \"" MEAN_COLOUR "\" front\n", x - 0.3, s->mean, x + 0.3, s->mean);
    sb_printf(b, "set arrow from %.17g,%.17g to %.17g,%.17g nohead lw 2.5 "
                 "lc rgb \"" WORST_COLOUR "\" front\n", x - 0.3, s->worst, x + 0.3, s->worst);
    sb_printf(b, "set arrow from %.17g,%.17g to %.17g,%.17g nohead dt 2 "
                 "lw 1.5 lc rgb \"" WORST_COLOUR "\" front\n", x - 0.3, decile, x + 0.3,
              decile);
    for (size_t i = 0; i < nl; i++)
        sb_printf(b, "set label \"%s\" at %.17g,%.17g left tc rgb \"%s\"%s front\n",
                  l[i].text, x + 0.32, l[i].y, l[i].colour,
                  l[i].small ? " font \",9\"" : "");
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
    mark_label labels[PLOT_MAX_COLUMNS][3];
    size_t nl[PLOT_MAX_COLUMNS];
    double lo, hi;
    clients_range(c, labels, nl, &lo, &hi);
    sb_printf(b, "set yrange [%.17g:%.17g]\n", lo, hi);
    for (size_t k = 0; k < c->ncol; k++) {
        clients_marks(b, c, k, labels[k], nl[k]);
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
    json_t *root = load_result(o->args[0]);
    if (root == NULL)
        return EXIT_USAGE;
    int rc = plot_has_format(root, PFLREF_RESULT_FORMAT, o->args[0]) ? EXIT_OK
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

/* ---- the command ----------------------------------------------------------- */

/* The figure's format: --format, else the name's ending (.svg, .png);
 * standard output (-o -) is SVG unless --format png says otherwise. */
static int figure_format(plot_opts *o, const char *format)
{
    if (format != NULL && strcmp(format, "svg") != 0 &&
        strcmp(format, "png") != 0)
        return cli_usage_error("--format is svg or png", format);
    if (cli_is_stdout(o->out)) {
        o->png = format != NULL && strcmp(format, "png") == 0;
        return EXIT_OK;
    }
    size_t n = strlen(o->out);
    if (n > 4 && strcmp(o->out + n - 4, ".png") == 0)
        o->png = 1;
    else if (!(n > 4 && strcmp(o->out + n - 4, ".svg") == 0))
        return cli_usage_error("-o: the figure's name must end in .svg or "
                               ".png", o->out);
    if (format != NULL && strcmp(format, o->png ? "png" : "svg") != 0)
        return cli_usage_error("--format disagrees with the figure's name",
                               o->out);
    return EXIT_OK;
}

static int parse_opts(int argc, char **argv, plot_opts *o)
{
    const char *format = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int has_value = i + 1 < argc;
        if (strcmp(a, "-o") == 0 || strcmp(a, "--metric") == 0 ||
            strcmp(a, "--title") == 0 || strcmp(a, "--format") == 0) {
            if (!has_value)
                return cli_usage_error("option needs a value", a);
            const char *v = argv[++i];
            if (a[1] == 'o')
                o->out = v;
            else if (a[2] == 'm')
                o->metric = v;
            else if (a[2] == 'f')
                format = v;
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
        return cli_usage_error("plot needs -o FIG.svg, -o FIG.png or -o -",
                               NULL);
    return figure_format(o, format);
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
    /* a figure that could not be written is refused before the inputs
     * are read and the specs of `curves` run */
    pflref_error err;
    pflref_error_clear(&err);
    if (cli_check_output(o.out, &err) != PFLREF_OK)
        return cli_fail(&err, "plot");
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
