/* SPDX-License-Identifier: GPL-3.0-or-later */
/* cli/plot_check.c: pflref plot check, the correct digits of a check
 * report (pflref-check-report/1, `pflref check --json`; docs/formats.md,
 * "Check reports") along the trajectory (docs/cli.md, "pflref plot").
 *
 * One panel per vector (the failed ones first): x is the position of each
 * expected record in the vector's order (round, client, step; the final
 * state last), with a tic at each round's first record; y its correct
 * digits (the report's by_quantity[].trajectory_digits), one line per
 * quantity name; the tolerance's digits, -log10(rtol), a dashed line;
 * the first divergence a vertical line, labelled.  Every field is read and
 * checked before anything is drawn: a missing or ill-typed one is exit 2
 * naming it (vectors[0].by_quantity[1].trajectory_digits.min_lre[3]), and
 * no file is written.  Glue only, as cli/plot.c: the digits are the
 * report's own.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "cli.h"
#include "plot.h"

/* ---- plot check -------------------------------------------------------------- */

/* Vectors drawn on one figure, at most (a panel each, the failed ones
 * first; `check --include ID` makes a report of one vector). */
#define CHECK_MAX_PANELS 4
/* Round tics on a panel's x axis, at most (every k-th round beyond). */
#define CHECK_MAX_TICS 12
/* The band above the points (no record has more than PFLREF_LRE_CAP =
 * 15.95 digits): its two rows of labels, in digits. */
#define CHECK_BAND_LOW 17.3
#define CHECK_BAND_TOP 18.5

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
    size_t n_at, cap_at;
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
        const char *what = NULL;
        if (x < 0 || x >= p->records)
            what = "position";
        else if (!json_is_null(ri) && count_value(ri) < 0)
            what = "round";
        else if (!json_is_number(di) || json_number_value(di) < 0.0)
            what = "min_lre";
        if (what != NULL) {
            char g[220];
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
        if (p->n_at == p->cap_at) {
            const size_t cap = 2 * p->cap_at + 64;
            check_at *grown = realloc(p->at, cap * sizeof *grown);
            if (grown == NULL) {
                b->failed = 1;   /* plot_render reports it */
                return 0;
            }
            p->at = grown;
            p->cap_at = cap;
        }
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
    /* both in the band above the 15.95-digit cap, where no point can be
     * (CHECK_BAND): the whole text on its top row, a short one at the
     * line on the row below, on the side with more room */
    const int right = 2 * x > p->records;
    sb_printf(b, " at graph 0.01, first %.2f left tc rgb \"#b3261e\" front\n"
                 "set label \"first divergence\" at first %lld, first %.2f %s "
                 "offset %d,0 tc rgb \"#b3261e\" front\n", CHECK_BAND_TOP, x,
              CHECK_BAND_LOW, right ? "right" : "left", right ? -1 : 1);
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
    sb_printf(b, "\nset xrange [-0.5:%lld.5]\n",
              p->records > 1 ? p->records - 1 : 0);
    check_tics(b, p);
    if (check_divergence(b, p, path) != 0)
        return -1;
    for (size_t t = 0; t < p->n_rtol; t++)
        sb_printf(b, "$p%zutol%zu << EOD\n-0.5 %.17g\n%lld.5 %.17g\nEOD\n",
                  panel, t, -log10(p->rtol[t]),
                  p->records > 1 ? p->records - 1 : 0, -log10(p->rtol[t]));
    if (p->n_at == 0)
        return check_bad(path, p->k, "by_quantity",
                         "no quantity has a point of trajectory_digits "
                         "(nothing compared)");
    sb_printf(b, "plot ");
    const char *sep = "";
    json_array_foreach(byq, q, e) {
        /* a name skipped under --partial has no point: no line */
        if (json_array_size(json_object_get(
                json_object_get(e, "trajectory_digits"), "position")) == 0)
            continue;
        sb_printf(b, "%s$p%zuq%zu using 1:2 with linespoints pt 7 ps 0.6 "
                     "title ", sep, panel, q);
        sb_quoted(b, json_string_value(json_object_get(e, "name")));
        sep = ", ";
    }
    for (size_t t = 0; t < p->n_rtol; t++) {
        char name[96];
        snprintf(name, sizeof name, "tolerance: %.3g digits (rtol %.3g)",
                 -log10(p->rtol[t]), p->rtol[t]);
        sb_printf(b, ", $p%zutol%zu using 1:2 with lines dt 2 lw 1.5 lc rgb "
                     "\"#1f4e9e\" title ", panel, t);
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
    /* the key under the axis, across the width, so that the plot has the
     * whole width; the band above 16 digits holds the labels */
    sb_printf(b, "set ylabel \"correct digits (LRE)\"\nset yrange [0:%.2f]\n"
                 "set ytics 0, 2, 16\n"
                 "set key outside bottom center horizontal Left reverse\n"
                 "set grid ytics lc rgb \"#dddddd\"\nset offsets 0, 0, 0, 0\n",
              CHECK_BAND_TOP + 0.8);
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

int plot_check(const plot_opts *o)
{
    if (o->nargs != 1)
        return cli_usage_error("plot check takes one report (check --json)",
                               NULL);
    json_t *root = plot_load_object(o->args[0]);
    if (root == NULL)
        return EXIT_USAGE;
    int rc = plot_has_format(root, "pflref-check-report/1", o->args[0])
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
